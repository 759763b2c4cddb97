import CommandLineSupport
import Pantry

/// `--server`, `--data-dir` and `--no-analytics`, taken by every command the way every app's
/// command takes them.
typealias GlobalOptions = SharedOptions<PantryCommand>

extension GlobalOptions {
    func app() throws -> PantryApp { try PantryCommand.app(self, creating: true) }

    /// The app's configuration: the answer timeout a slow link sets (`PANTRY_ANSWER_TIMEOUT`) is
    /// also how long a command waits to learn whether the server answers at all, as in every app.
    func configuration(creating: Bool) throws -> PantryConfiguration {
        var configuration = try configuration(creating: creating, PantryConfiguration.init)
        if let seconds = try answerTimeout() { configuration.device.localCommandSyncBudget = .seconds(seconds) }
        return configuration
    }
}
