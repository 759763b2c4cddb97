import CommandLineSupport
import EventualAPI
import Foundation
import Recycling

/// Tells the person once of scans the server classified since they last looked.
func announceClassified(_ recycling: UserRecycling, json: Bool) async {
    guard let line = await classifiedWhileAway(recycling) else { return }
    if json { Terminal.error(line) } else { say(Terminal.paint(line, .green)) }
}

/// "2 scans were classified while you were away, and 1 could not be: sustainu scans", once,
/// when the server answered any. NB: a scan the server could not name a bin for is never counted
/// as classified.
func classifiedWhileAway(_ recycling: UserRecycling) async -> String? {
    guard let answered = try? await recycling.takeClassifiedWhileAway(), answered.classified + answered.unclassified > 0 else { return nil }
    let (classified, unclassified) = (answered.classified, answered.unclassified)
    let line = switch (classified, unclassified) {
    case (_, 0): "\(classified) scan\(classified == 1 ? " was" : "s were") classified while you were away"
    case (0, _): "\(unclassified) scan\(unclassified == 1 ? "" : "s") could not be classified while you were away"
    default: "\(classified) scan\(classified == 1 ? " was" : "s were") classified while you were away, and \(unclassified) could not be"
    }
    return line + ": sustainu scans"
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
