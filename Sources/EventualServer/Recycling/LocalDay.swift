import EventualAPI
import Foundation

/// A calendar day in some time zone, as "YYYY-MM-DD", with a day number for arithmetic.
struct LocalDay: Sendable, Hashable, Comparable {
    /// Days since 1970-01-01 (proleptic Gregorian).
    let number: Int

    init(number: Int) {
        self.number = number
    }

    /// The day `instant` falls on in `timeZone`.
    init(_ instant: Date, in timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: instant)
        self.init(number: Int(CivilCalendar.dayNumber(year: Int64(parts.year!), month: Int64(parts.month!), day: Int64(parts.day!))))
    }

    /// Parses "YYYY-MM-DD".
    init?(text: String) {
        let parts = text.split(separator: "-")
        guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        self.init(number: Int(CivilCalendar.dayNumber(year: Int64(year), month: Int64(month), day: Int64(day))))
    }

    var text: String { CivilCalendar.text(ofDay: Int64(number)) }

    func adding(days: Int) -> LocalDay { LocalDay(number: number + days) }

    static func < (lhs: LocalDay, rhs: LocalDay) -> Bool { lhs.number < rhs.number }
}
