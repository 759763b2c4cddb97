import ArgumentParser
import Foundation
import Pantry

/// `--server` and `--data-dir`, taken by every command.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "The server's URL (env PANTRY_SERVER; default http://127.0.0.1:8080).")
    var server: String?

    @Option(name: .customLong("data-dir"), help: "Where this device keeps its data (env PANTRY_DATA_DIR; default ~/.local/share/pantry).")
    var dataDir: String?

    func app() throws -> PantryApp {
        let environment = ProcessInfo.processInfo.environment
        let serverText = server ?? environment["PANTRY_SERVER"] ?? "http://127.0.0.1:8080"
        guard let serverURL = URL(string: serverText), let scheme = serverURL.scheme, ["http", "https"].contains(scheme),
              serverURL.host != nil else {
            throw ValidationError("'\(serverText)' is not a server URL: use http://HOST:PORT")
        }
        let directory: URL
        if let path = dataDir ?? environment["PANTRY_DATA_DIR"], !path.isEmpty {
            directory = URL(fileURLWithPath: (path as NSString).expandingTildeInPath, isDirectory: true)
        } else if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            directory = URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("pantry", isDirectory: true)
        } else {
            directory = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share/pantry", isDirectory: true)
        }
        return PantryApp(configuration: PantryConfiguration(dataDirectory: directory, serverURL: serverURL))
    }
}

/// `--json`, taken by every listing.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false
}
