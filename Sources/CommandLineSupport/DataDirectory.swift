import Foundation

/// The settings every app's command takes the same way: the server's URL and the data folder.
public enum CommandSettings {
    /// The server URL from `--server`, else the environment variable, else the local default.
    public static func serverURL(_ option: String?, environment variable: String) throws -> URL {
        let text = option ?? ProcessInfo.processInfo.environment[variable] ?? "http://127.0.0.1:8080"
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty,
              // NB: AsyncHTTPClient traps on a port beyond 65535 instead of failing.
              url.port.map({ (1...65_535).contains($0) }) ?? true else {
            throw CLIError("'\(text.prefix(200))' is not a server URL: use http://HOST:PORT, with a port from 1 to 65535")
        }
        return url
    }

    /// The data folder from `--data-dir`, else the environment variable, else
    /// `$XDG_DATA_HOME/<app>` or `~/.local/share/<app>`; created (unless not `create`) and checked writable.
    public static func dataDirectory(_ option: String?, environment variable: String, app: String, create: Bool = true) throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        let directory: URL
        if let path = option ?? environment[variable], !path.isEmpty {
            directory = URL(fileURLWithPath: (path as NSString).expandingTildeInPath, isDirectory: true)
        } else if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            directory = URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent(app, isDirectory: true)
        } else {
            directory = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share/\(app)", isDirectory: true)
        }
        // NB: a command that only reads leaves a missing folder missing (nothing to read there).
        if create || FileManager.default.fileExists(atPath: directory.path) { try prepare(directory) }
        return directory
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
