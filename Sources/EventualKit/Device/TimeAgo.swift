import Foundation

/// How long ago something happened, as people say it: "just now", "3 minutes ago", "5 days ago".
public enum TimeAgo {
    /// The phrase for a past instant in Unix milliseconds, seen at `now`.
    public static func phrase(_ millis: Int64, now: Int64) -> String {
        // NB: a time synced from another device may be anything: no overflow trap on a wild one.
        let (difference, overflow) = now.subtractingReportingOverflow(millis)
        let seconds = overflow ? (millis < 0 ? Int64.max / 1000 : 0) : max(0, difference) / 1000
        switch seconds {
        case ..<60: return "just now"
        case ..<3600: return count(seconds / 60, "minute") + " ago"
        case ..<86_400: return count(seconds / 3600, "hour") + " ago"
        default: return count(seconds / 86_400, "day") + " ago"
        }
    }

    private static func count(_ number: Int64, _ unit: String) -> String { number == 1 ? "1 \(unit)" : "\(number) \(unit)s" }
}
