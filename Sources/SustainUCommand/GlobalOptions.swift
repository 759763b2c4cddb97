import ArgumentParser
import CommandLineSupport
import EventualAPI
import EventualKit
import Foundation
import Recycling

/// `--server` and `--data-dir`, taken by every command, before or after its name.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "The server's URL (env SUSTAINU_SERVER; default http://127.0.0.1:8080).")
    var server: String?

    @Option(name: .customLong("data-dir"), help: "Where this device keeps its data (env SUSTAINU_DATA_DIR; default ~/.local/share/sustainu).")
    var dataDir: String?

    @Flag(name: .customLong("no-analytics"), help: "Record no usage events (env SUSTAINU_NO_ANALYTICS=1).")
    var noAnalytics = false

    func validate() throws {
        try usageCheck {
            _ = try serverURL()
            if let dataDir, dataDir.trimmingCharacters(in: .whitespaces).isEmpty {
                throw CLIError("--data-dir needs a folder's path (leave it out for ~/.local/share/sustainu)")
            }
        }
    }

    /// The server's URL; a malformed one is said with a capital and what to type.
    func serverURL() throws -> URL {
        do {
            return try CommandSettings.serverURL(server, environment: "SUSTAINU_SERVER")
        } catch {
            let typed = server ?? ProcessInfo.processInfo.environment["SUSTAINU_SERVER"] ?? ""
            throw CLIError("Not a server URL: '\(Terminal.oneLine(String(typed.prefix(80))))'; use http://HOST:PORT with a port from 1 to 65535")
        }
    }

    func app() throws -> RecyclingApp {
        let serverURL = try serverURL()
        let directory = try CommandSettings.dataDirectory(dataDir, environment: "SUSTAINU_DATA_DIR", app: "sustainu")
        var configuration = RecyclingConfiguration(dataDirectory: directory, serverURL: serverURL)
        let optOut = ProcessInfo.processInfo.environment["SUSTAINU_NO_ANALYTICS"]?.lowercased() ?? ""
        configuration.analyticsEnabled = !(noAnalytics || ["1", "true", "yes"].contains(optOut))
        if let text = ProcessInfo.processInfo.environment["SUSTAINU_ANSWER_TIMEOUT"] {
            // NB: for slow links (and busy test machines): how long the server may take to start
            // answering, and so how long any wait on it may be, a local command's too.
            guard let seconds = Int(text), (1...300).contains(seconds) else {
                throw CLIError("SUSTAINU_ANSWER_TIMEOUT must be a number of seconds from 1 to 300, not '\(text.prefix(40))'")
            }
            configuration.timeouts.firstByte = .seconds(seconds)
            configuration.refreshBudget = .seconds(seconds)
            configuration.localCommandSyncBudget = .seconds(seconds)
            configuration.catchUpCheck = .seconds(seconds)
            configuration.catchUpBudget = .seconds(max(3, seconds))
            configuration.scanBudget = .seconds(max(10, seconds))
        }
        if let zone = ProcessInfo.processInfo.environment["TZ"], !zone.isEmpty {
            guard let timeZone = TimeZone(identifier: zone) else { throw CLIError("TZ='\(zone.prefix(64))' is not a time zone such as Europe/Vienna") }
            configuration.timeZone = timeZone
        }
        return RecyclingApp(configuration: configuration)
    }

    /// The signed-in person's recycling, after sending what waits (briefly) so that results that
    /// came in while they were away can be announced. `network: false` for a command that reads
    /// only this device's data: it opens no connection at all.
    func open(network: Bool = true) async throws -> UserRecycling {
        let recycling = try app().open()
        await recycling.analytics.record(.appOpened)
        if network { await recycling.catchUp() }
        return recycling
    }
}

/// `--json`, taken by every listing.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false
}

/// Tells the person once of scans the server classified since they last looked.
func announceClassified(_ recycling: UserRecycling, json: Bool) async {
    guard let count = try? await recycling.takeClassifiedWhileAway(), count > 0 else { return }
    let line = "\(count) scan\(count == 1 ? " was" : "s were") classified while you were away: sustainu scans"
    if json { Terminal.error(line) } else { say(Terminal.paint(line, .green)) }
}

/// "3 min ago", "2 h ago", "5 days ago".
func age(_ millis: Int64, now: Int64 = UnixMillis.now()) -> String {
    let seconds = max(0, now - millis) / 1000
    switch seconds {
    case ..<60: return "just now"
    case ..<3600: return "\(seconds / 60) min ago"
    case ..<86_400: return "\(seconds / 3600) h ago"
    default: return "\(seconds / 86_400) day\(seconds / 86_400 == 1 ? "" : "s") ago"
    }
}

/// A clock time for people, "14:02", in the device's time zone.
func clock(_ millis: Int64) -> String {
    let formatter = DateFormatter()
    formatter.dateFormat = "HH:mm"
    return formatter.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
}

/// A position typed as LATITUDE,LONGITUDE.
enum Position {
    /// The position, or a usage mistake quoting what was typed. NB: a negative pair arrives with
    /// a leading space (CommandLineSupport's NegativeCoordinates), which is not the person's.
    static func parse(_ text: String) throws -> GeoPosition {
        let typed = text.trimmingCharacters(in: .whitespaces)
        guard let position = GeoPosition(parsing: typed) else { throw RecyclingError.invalidPosition(typed) }
        return position
    }
}

extension RecyclingError {
    /// A value typed on the command line that cannot be one (status 64, like any usage mistake).
    var isMalformedArgument: Bool {
        switch self {
        case .invalidPosition, .invalidBarcode, .nothingToScan, .unknownTrashType, .invalidTime, .invalidLimit, .invalidAccountDetail, .idTooShort: return true
        default: return false
        }
    }
}

/// Prints prose on stdout wrapped to the output's width, each line's indentation kept (a tip's
/// text, a packaging's parts).
func say(_ text: String) {
    let width = Terminal.columns
    print(text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
        let indent = String(line.prefix { $0 == " " })
        let wrapped = Terminal.wrap(String(line.dropFirst(indent.count)), width: max(10, width - indent.count))
        return wrapped.split(separator: "\n", omittingEmptySubsequences: false).map { indent + $0 }.joined(separator: "\n")
    }.joined(separator: "\n"))
}

/// "1 scan", "3 scans": a count with its noun.
func count(_ number: Int, _ one: String, _ many: String) -> String {
    "\(number) \(number == 1 ? one : many)"
}
