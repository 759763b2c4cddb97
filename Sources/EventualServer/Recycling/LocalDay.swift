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
        self.init(number: Self.daysFromCivil(year: parts.year!, month: parts.month!, day: parts.day!))
    }

    /// Parses "YYYY-MM-DD".
    init?(text: String) {
        let parts = text.split(separator: "-")
        guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        self.init(number: Self.daysFromCivil(year: year, month: month, day: day))
    }

    var text: String {
        let (year, month, day) = Self.civil(fromDays: number)
        return String(format: "%04d-%02d-%02d", year, month, day)
    }

    func adding(days: Int) -> LocalDay { LocalDay(number: number + days) }

    static func < (lhs: LocalDay, rhs: LocalDay) -> Bool { lhs.number < rhs.number }

    // Howard Hinnant's days_from_civil / civil_from_days.
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
