import EventualKit
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
    public static func ago(_ millis: Int64, now: Int64) -> String { TimeAgo.phrase(millis, now: now) }
}
