import CommandLineSupport
import Pantry

/// `--server`, `--data-dir` and `--no-analytics`, taken by every command the way every app's
/// command takes them.
typealias GlobalOptions = SharedOptions<PantryCommand>

extension GlobalOptions {
    func app() throws -> PantryApp { try PantryCommand.app(self, creating: true) }
}
