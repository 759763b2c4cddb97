import CommandLineSupport
import Foundation
import Spending

/// `--server`, `--data-dir` and `--no-analytics`, taken by every command the way every app's
/// command takes them.
typealias GlobalOptions = SharedOptions<SpendiqCommand>

extension GlobalOptions {
    /// The app on this device; a command that only reads (`creating: false`) finds nobody signed
    /// in where there is no data folder, and creates none.
    func app(creating: Bool = true) throws -> SpendingApp {
        var configuration = try configuration(creating: creating, SpendingConfiguration.init)
        guard creating || FileManager.default.fileExists(atPath: configuration.dataDirectory.path) else { throw SpendingError.notSignedIn }
        if let seconds = try answerTimeout() { configuration.networkReadTimeout = .seconds(seconds) }
        return SpendingApp(configuration: configuration)
    }
}
