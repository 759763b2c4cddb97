import EventualAPI
import Foundation

/// Days in a row with points, counted on the device at a given moment: the saved score may be
/// days old, and a streak it showed may have broken since.
enum Streak {
    /// What the server said on the day the score was saved (day numbers since 1970-01-01, in the
    /// person's time zone).
    struct Saved: Equatable {
        let day: Int64
        /// The server's streak that day: days in a row ending that day, or the day before when
        /// that day had no points yet.
        let streak: Int
        let pointsThatDay: Int
    }

    /// The days in a row with points that end the day before `today`: the streak a reminder may
    /// say is at risk today. `daysWithPoints` are the days this device knows to have points (the
    /// saved score's last days, its own classified scans); before the saved day, the server's
    /// count stands in for the days the device does not hold.
    static func endingYesterday(today: Int64, daysWithPoints: Set<Int64>, saved: Saved?) -> Int {
        var run = 0
        var day = today - 1
        while true {
            if let saved, day == saved.day - 1 {
                // NB: every day since the saved one had points: the server's run before it continues.
                return run + max(0, saved.pointsThatDay > 0 ? saved.streak - 1 : saved.streak)
            }
            guard daysWithPoints.contains(day) else { return run }
            run += 1
            day -= 1
        }
    }

    /// The day number of `date` in `timeZone`.
    static func day(of date: Date, in timeZone: TimeZone) -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return CivilCalendar.dayNumber(year: Int64(parts.year ?? 1970), month: Int64(parts.month ?? 1), day: Int64(parts.day ?? 1))
    }

    /// The day number of "2026-11-23", nil for anything else.
    static func day(of text: String) -> Int64? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { Int64($0) }
        guard parts.count == 3, let year = parts[0], let month = parts[1], let day = parts[2] else { return nil }
        return CivilCalendar.dayNumber(year: year, month: month, day: day)
    }
}
