/// Proleptic Gregorian dates as day numbers since 1970-01-01 and back, with no calendar or time
/// zone objects, so they read the same on every platform (Howard Hinnant's era-based formulas).
public enum CivilCalendar {
    /// Days since 1970-01-01 of a date (negative before it).
    public static func dayNumber(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day number: the inverse of `dayNumber(year:month:day:)`.
    public static func date(ofDay days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// "YYYY-MM-DD" of a day number.
    public static func text(ofDay days: Int64) -> String {
        let (year, month, day) = date(ofDay: days)
        var text = ""
        text.reserveCapacity(10)
        appendDigits(year, width: 4, to: &text)
        text += "-"
        appendDigits(month, width: 2, to: &text)
        text += "-"
        appendDigits(day, width: 2, to: &text)
        return text
    }

    /// `value` in decimal, left-padded with zeros to `width` digits.
    public static func appendDigits(_ value: Int64, width: Int, to text: inout String) {
        let digits = String(value)
        if digits.count < width { text += String(repeating: "0", count: width - digits.count) }
        text += digits
    }
}
