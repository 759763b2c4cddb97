import EventualAPI
import Foundation

/// The days a question looks at: `from` to `to`, both whole UTC days, inclusive.
struct AnalyticsRange: Sendable, Equatable {
    static let dayMillis: Int64 = 86_400_000
    /// The longest range asked at once.
    static let maxDays: Int64 = 366
    static let defaultDays: Int64 = 30

    /// Day numbers since 1970-01-01.
    let fromDay: Int64
    let toDay: Int64

    /// Unix ms of the first moment in the range.
    var start: Int64 { fromDay * Self.dayMillis }
    /// Unix ms just after the range.
    var end: Int64 { (toDay + 1) * Self.dayMillis }
    var days: Int64 { toDay - fromDay + 1 }

    var from: String { Self.format(day: fromDay) }
    var to: String { Self.format(day: toDay) }

    init(fromDay: Int64, toDay: Int64) {
        self.fromDay = fromDay
        self.toDay = toDay
    }

    /// From the query's `from` and `to` (either may be absent: the range ends today and spans 30
    /// days); a 400 naming the problem for a day that does not exist or a range backwards or too long.
    init(from: String?, to: String?, now: Int64 = UnixMillis.now()) throws(APIError) {
        let toDay = try to.map { text throws(APIError) in try Self.day(text, field: "to") } ?? now / Self.dayMillis
        let fromDay = try from.map { text throws(APIError) in try Self.day(text, field: "from") } ?? (toDay - Self.defaultDays + 1)
        guard fromDay <= toDay else { throw .badRequest("from (\(Self.format(day: fromDay))) must not be after to (\(Self.format(day: toDay)))") }
        guard toDay - fromDay + 1 <= Self.maxDays else {
            throw .badRequest("a range spans at most \(Self.maxDays) days, not \(toDay - fromDay + 1)")
        }
        self.init(fromDay: fromDay, toDay: toDay)
    }

    /// The day number of `YYYY-MM-DD`, or a 400.
    static func day(_ text: String, field: String) throws(APIError) -> Int64 {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int64(parts[0]), let month = Int64(parts[1]), let day = Int64(parts[2]),
              (1970...9999).contains(year), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else {
            throw .badRequest("\(field) must be a date YYYY-MM-DD from 1970 on, not '\(text.prefix(40))'")
        }
        return CivilCalendar.dayNumber(year: year, month: month, day: day)
    }

    static func format(day: Int64) -> String { CivilCalendar.text(ofDay: day) }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
