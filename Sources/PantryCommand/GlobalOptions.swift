import CommandLineSupport
import Pantry

/// `--server`, `--data-dir` and `--no-analytics`, taken by every command the way every app's
/// command takes them.
typealias GlobalOptions = SharedOptions<PantryCommand>

extension GlobalOptions {
    func app() throws -> PantryApp { try PantryCommand.app(self, creating: true) }

    /// The app's configuration (`PANTRY_ANSWER_TIMEOUT` set on it as in every app).
    func configuration(creating: Bool) throws -> PantryConfiguration {
        try configuration(creating: creating, PantryConfiguration.init)
    }
}
