import ArgumentParser
import CommandLineSupport
import EventualAPI
import EventualKit
import Foundation
import Recycling

/// `--server`, `--data-dir` and `--no-analytics`, taken by every command the way every app's
/// command takes them.
typealias GlobalOptions = SharedOptions<SustainUCommand>

extension GlobalOptions {
    func app() throws -> RecyclingApp {
        var configuration = try configuration(RecyclingConfiguration.init)
        if let seconds = try answerTimeout() {
            // NB: how long the server may take to start answering is how long any wait on it may
            // be, a local command's too.
            configuration.refreshBudget = .seconds(seconds)
            configuration.localCommandSyncBudget = .seconds(seconds)
            configuration.catchUpCheck = .seconds(seconds)
            configuration.catchUpBudget = .seconds(max(3, seconds))
            configuration.scanBudget = .seconds(max(10, seconds))
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
