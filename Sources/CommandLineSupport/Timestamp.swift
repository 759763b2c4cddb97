import Foundation

/// The one way the apps' commands write an instant (in `--json` and wherever a time is exact):
/// ISO 8601 in UTC to the second, `2026-05-04T09:30:00Z`.
public enum Timestamp {
    /// Unix milliseconds as `2026-05-04T09:30:00Z`.
    public static func iso8601(_ millis: Int64) -> String {
        iso8601(Date(timeIntervalSince1970: Double(millis) / 1000))
    }

    /// A date as `2026-05-04T09:30:00Z`.
    public static func iso8601(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
