import Foundation

/// Says a day the way people do: "today", "tomorrow", "in 3 days", "2 days ago".
public enum RelativeDay {
    public static func describe(_ day: Day, today: Day, calendar: Calendar = .current) -> String {
        let distance = today.days(until: day, calendar: calendar)
        switch distance {
        case 0: return "today"
        case 1: return "tomorrow"
        case -1: return "yesterday"
        case 2...: return "in \(distance) days"
        default: return "\(-distance) days ago"
        }
    }

    /// "3 minutes ago", "2 hours ago", "5 days ago" for a past instant in Unix milliseconds.
    public static func ago(_ millis: Int64, now: Int64) -> String {
        // NB: a time synced from another device may be anything: no overflow trap on a wild one.
        let (difference, overflow) = now.subtractingReportingOverflow(millis)
        let seconds = overflow ? (millis < 0 ? Int64.max / 1000 : 0) : max(0, difference) / 1000
        switch seconds {
        case ..<60: return "just now"
        case ..<3600: return plural(seconds / 60, "minute") + " ago"
        case ..<86_400: return plural(seconds / 3600, "hour") + " ago"
        default: return plural(seconds / 86_400, "day") + " ago"
        }
    }

    private static func plural(_ count: Int64, _ unit: String) -> String { count == 1 ? "1 \(unit)" : "\(count) \(unit)s" }
}
