import ArgumentParser
import CommandLineSupport
import Foundation
import Spending

/// `--server` and `--data-dir`, taken by every command, before or after its name.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "The server's URL (env SPENDIQ_SERVER; default http://127.0.0.1:8080).")
    var server: String?

    @Option(name: .customLong("data-dir"), help: "Where this device keeps its data (env SPENDIQ_DATA_DIR; default ~/.local/share/spendiq).")
    var dataDir: String?

    @Flag(name: .customLong("no-analytics"), help: "Record no usage events (env SPENDIQ_NO_ANALYTICS=1).")
    var noAnalytics = false

    // NB: a malformed server URL or timeout is a usage mistake (64), found before anything runs.
    func validate() throws {
        try usageCheck {
            _ = try CommandSettings.serverURL(server, environment: "SPENDIQ_SERVER")
            _ = try Self.answerTimeout()
        }
    }

    /// The app on this device; a command that only reads (`creating: false`) finds nobody signed
    /// in where there is no data folder, and creates none.
    func app(creating: Bool = true) throws -> SpendingApp {
        let environment = ProcessInfo.processInfo.environment
        let serverURL = try CommandSettings.serverURL(server, environment: "SPENDIQ_SERVER")
        let directory = try CommandSettings.dataDirectory(dataDir, environment: "SPENDIQ_DATA_DIR", app: "spendiq", create: creating)
        guard creating || FileManager.default.fileExists(atPath: directory.path) else { throw SpendingError.notSignedIn }
        var configuration = SpendingConfiguration(dataDirectory: directory, serverURL: serverURL)
        configuration.analyticsEnabled = !(noAnalytics || ["1", "true", "yes"].contains(environment["SPENDIQ_NO_ANALYTICS"]?.lowercased() ?? ""))
        if let seconds = try Self.answerTimeout() {
            // NB: for slow links (and busy test machines): how long the server may take to start answering.
            configuration.timeouts.firstByte = .seconds(seconds)
            configuration.networkReadTimeout = .seconds(seconds)
            // NB: and how long a local command waits to learn whether the server answers at all
            // (offers, retry): 300 ms said "offline" of a link that takes longer to answer.
            configuration.localCommandSyncBudget = .seconds(seconds)
        }
        return SpendingApp(configuration: configuration)
    }

    private static func answerTimeout() throws -> Int? {
        guard let text = ProcessInfo.processInfo.environment["SPENDIQ_ANSWER_TIMEOUT"] else { return nil }
        guard let seconds = Int(text), (1...300).contains(seconds) else {
            throw CLIError("SPENDIQ_ANSWER_TIMEOUT must be a number of seconds from 1 to 300, not '\(text.prefix(40))'")
        }
        return seconds
    }
}

/// `--json`, taken by every listing.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false
}
