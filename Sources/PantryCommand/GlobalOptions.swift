import CommandLineSupport
import ArgumentParser
import Foundation
import Pantry

/// `--server` and `--data-dir`, taken by every command, before or after its name: `pantry` itself
/// declares them too, and ArgumentParser hands the one parsed value to the subcommand.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "The server's URL (env PANTRY_SERVER; default http://127.0.0.1:8080).")
    var server: String?

    @Option(name: .customLong("data-dir"), help: "Where this device keeps its data (env PANTRY_DATA_DIR; default ~/.local/share/pantry).")
    var dataDir: String?

    @Flag(name: .customLong("no-analytics"), help: "Record and send no usage events (env PANTRY_NO_ANALYTICS=1).")
    var noAnalytics = false

    func app() throws -> PantryApp {
        let serverURL = try CommandSettings.serverURL(server, environment: "PANTRY_SERVER")
        let directory = try CommandSettings.dataDirectory(dataDir, environment: "PANTRY_DATA_DIR", app: "pantry")
        var configuration = PantryConfiguration(dataDirectory: directory, serverURL: serverURL)
        configuration.analyticsEnabled = !(noAnalytics || ["1", "true", "yes"].contains(ProcessInfo.processInfo.environment["PANTRY_NO_ANALYTICS"]?.lowercased() ?? ""))
        if let text = ProcessInfo.processInfo.environment["PANTRY_ANSWER_TIMEOUT"] {
            // NB: for slow links (and busy test machines): how long the server may take to start answering.
            guard let seconds = Int(text), (1...300).contains(seconds) else {
                throw CLIError("PANTRY_ANSWER_TIMEOUT must be a number of seconds from 1 to 300, not '\(text.prefix(40))'")
            }
            configuration.timeouts.firstByte = .seconds(seconds)
        }
        return PantryApp(configuration: configuration)
    }
}

/// `--json`, taken by every listing.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false
}
