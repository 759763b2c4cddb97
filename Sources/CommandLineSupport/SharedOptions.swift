import ArgumentParser
import EventualKit
import Foundation

/// The options every app's command takes, the same way: `--server`, `--data-dir` and
/// `--no-analytics`, each with its environment variable (`PANTRY_SERVER` for `pantry`), and the
/// settings only the environment gives (`PANTRY_ANSWER_TIMEOUT`, `TZ`). `Root` is the app's
/// command: its name names the default folder and prefixes the variables.
///
/// The root command declares these too, and ArgumentParser hands its one parsed value to the
/// subcommand; with `OptionOrder`, any option may come before or after a subcommand's name.
public struct SharedOptions<Root: ParsableCommand>: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The server's URL (env \(Self.variable("SERVER")); default http://127.0.0.1:8080)."))
    public var server: String?

    @Option(name: .customLong("data-dir"),
            help: ArgumentHelp("Where this device keeps its data (env \(Self.variable("DATA_DIR")); default ~/.local/share/\(Self.app))."))
    public var dataDir: String?

    @Flag(name: .customLong("no-analytics"), help: ArgumentHelp("Record and send no usage events (env \(Self.variable("NO_ANALYTICS"))=1)."))
    public var noAnalytics = false

    public init() {}

    // NB: a malformed setting is a usage mistake (64), found before anything runs.
    public func validate() throws {
        try usageCheck {
            _ = try serverURL()
            if let dataDir, dataDir.trimmingCharacters(in: .whitespaces).isEmpty {
                throw CLIError("--data-dir needs a folder's path (leave it out for ~/.local/share/\(Self.app))")
            }
            _ = try answerTimeout()
            _ = try timeZone()
        }
    }

    /// An app's configuration from these options: `make` gives it for a data folder and a server,
    /// and the device's settings the person chose are set on it (analytics, the answer timeout,
    /// the time zone). `creating: false` leaves a missing data folder missing.
    public func configuration<Configuration: AppConfiguration>(
        creating: Bool = true, _ make: (_ dataDirectory: URL, _ serverURL: URL) -> Configuration
    ) throws -> Configuration {
        let serverURL = try serverURL()
        var configuration = make(try dataDirectory(create: creating), serverURL)
        configuration.analyticsEnabled = analyticsEnabled
        if let seconds = try answerTimeout() {
            // NB: how long the server may take to start answering is also how long a command waits
            // to learn whether it answers at all: 300 ms said "offline" of a link that takes longer.
            configuration.timeouts.firstByte = .seconds(seconds)
            configuration.localCommandSyncBudget = .seconds(seconds)
        }
        if let timeZone = try timeZone() { configuration.timeZone = timeZone }
        return configuration
    }

    /// The server's URL from `--server`, else the environment, else the local default.
    public func serverURL() throws(SettingError) -> URL {
        let text = server ?? Self.environment(Self.variable("SERVER")) ?? "http://127.0.0.1:8080"
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty,
              // NB: AsyncHTTPClient traps on a port beyond 65535 instead of failing.
              url.port.map({ (1...65_535).contains($0) }) ?? true else {
            throw .notAServerURL(text)
        }
        return url
    }

    /// The data folder from `--data-dir`, else the environment, else `$XDG_DATA_HOME/<app>` or
    /// `~/.local/share/<app>`; created (unless not `create`) and checked writable.
    public func dataDirectory(create: Bool = true) throws -> URL {
        let directory: URL
        if let path = dataDir ?? Self.environment(Self.variable("DATA_DIR")), !path.isEmpty {
            directory = URL(fileURLWithPath: (path as NSString).expandingTildeInPath, isDirectory: true)
        } else if let xdg = Self.environment("XDG_DATA_HOME") {
            directory = URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent(Self.app, isDirectory: true)
        } else {
            // NB: $HOME first, as every Unix tool: Foundation's home on Linux is the password
            // database's, which ignores a HOME set for a test, a container or `sudo -E`.
            let home = Self.environment("HOME").map { URL(fileURLWithPath: $0, isDirectory: true) }
                ?? FileManager.default.homeDirectoryForCurrentUser
            directory = home.appendingPathComponent(".local/share/\(Self.app)", isDirectory: true)
        }
        // NB: a command that only reads leaves a missing folder missing (nothing to read there).
        if create || FileManager.default.fileExists(atPath: directory.path) { try DataDirectory.prepare(directory) }
        return directory
    }

    /// Whether usage events may be recorded: not with `--no-analytics` or its variable set to 1, true or yes.
    public var analyticsEnabled: Bool {
        !(noAnalytics || ["1", "true", "yes"].contains(Self.environment(Self.variable("NO_ANALYTICS"))?.lowercased() ?? ""))
    }

    /// How many seconds the server may take to start answering (`<APP>_ANSWER_TIMEOUT`, for slow
    /// links and busy test machines), when set.
    public func answerTimeout() throws -> Int? {
        let variable = Self.variable("ANSWER_TIMEOUT")
        guard let text = Self.environment(variable) else { return nil }
        guard let seconds = Int(text), (1...300).contains(seconds) else {
            throw CLIError("\(variable) must be a number of seconds from 1 to 300, not '\(Terminal.oneLine(String(text.prefix(40))))'")
        }
        return seconds
    }

    /// The person's time zone from `TZ`, when set: an unknown one is refused rather than read as UTC.
    public func timeZone() throws -> TimeZone? {
        guard let zone = Self.environment("TZ") else { return nil }
        // NB: POSIX lets TZ start with a colon (TZ=:Europe/Vienna).
        guard let timeZone = TimeZone(identifier: zone.hasPrefix(":") ? String(zone.dropFirst()) : zone) else {
            throw CLIError("TZ='\(Terminal.oneLine(String(zone.prefix(64))))' is not a time zone such as Europe/Vienna")
        }
        return timeZone
    }

    /// The command's name: `pantry`.
    private static var app: String { Root.configuration.commandName ?? "app" }

    /// An environment variable of this app's: `PANTRY_SERVER`.
    private static func variable(_ name: String) -> String { app.uppercased() + "_" + name }

    /// An environment variable's value; an empty one is no setting.
    private static func environment(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// A shared option's value that cannot be used.
public enum SettingError: Error, Equatable, CustomStringConvertible {
    /// What was typed (or set in the environment) for the server's URL.
    case notAServerURL(String)

    public var description: String {
        switch self {
        case .notAServerURL(let text):
            "'\(Terminal.oneLine(String(text.prefix(200))))' is not a server URL: use http://HOST:PORT, with a port from 1 to 65535"
        }
    }
}

/// `--json`, taken by every command that lists or reports.
public struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON instead of a table.")
    public var json = false

    public init() {}
}
