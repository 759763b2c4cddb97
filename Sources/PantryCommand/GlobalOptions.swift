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
        let environment = ProcessInfo.processInfo.environment
        let serverText = server ?? environment["PANTRY_SERVER"] ?? "http://127.0.0.1:8080"
        guard let serverURL = URL(string: serverText), let scheme = serverURL.scheme, ["http", "https"].contains(scheme),
              let host = serverURL.host, !host.isEmpty,
              // NB: AsyncHTTPClient traps on a port beyond 65535 instead of failing.
              serverURL.port.map({ (1...65_535).contains($0) }) ?? true else {
            throw CLIError("'\(serverText)' is not a server URL: use http://HOST:PORT, with a port from 1 to 65535")
        }
        let directory: URL
        if let path = dataDir ?? environment["PANTRY_DATA_DIR"], !path.isEmpty {
            directory = URL(fileURLWithPath: (path as NSString).expandingTildeInPath, isDirectory: true)
        } else if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            directory = URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("pantry", isDirectory: true)
        } else {
            directory = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share/pantry", isDirectory: true)
        }
        try Self.prepare(directory)
        var configuration = PantryConfiguration(dataDirectory: directory, serverURL: serverURL)
        configuration.analyticsEnabled = !(noAnalytics || ["1", "true", "yes"].contains(environment["PANTRY_NO_ANALYTICS"]?.lowercased() ?? ""))
        if let text = environment["PANTRY_ANSWER_TIMEOUT"] {
            // NB: for slow links (and busy test machines): how long the server may take to start answering.
            guard let seconds = Int(text), (1...300).contains(seconds) else {
                throw CLIError("PANTRY_ANSWER_TIMEOUT must be a number of seconds from 1 to 300, not '\(text.prefix(40))'")
            }
            configuration.timeouts.firstByte = .seconds(seconds)
        }
        return PantryApp(configuration: configuration)
    }

    /// Makes sure the data directory is a folder this process can write, so that a mistake in
    /// `--data-dir` is said as such and not as a failed sign-in or database.
    static func prepare(_ directory: URL) throws(CLIError) {
        let path = directory.path
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) {
            guard isFolder.boolValue else { throw CLIError("The data directory \(path) is a file, not a folder: choose another --data-dir") }
        } else {
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch let error as CocoaError {
                throw CLIError("Cannot create the data directory \(path): \(FileProblem(error).reason)")
            } catch {
                throw CLIError("Cannot create the data directory \(path): \(Terminal.message(error))")
            }
        }
        guard access(path, W_OK | X_OK) == 0 else {
            throw CLIError("The data directory \(path) is not writable: choose another --data-dir, or fix its permissions")
        }
    }
}

/// `--json`, taken by every listing.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false
}
