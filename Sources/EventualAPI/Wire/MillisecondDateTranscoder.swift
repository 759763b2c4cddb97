import Foundation
import OpenAPIRuntime

/// RFC 3339 dates in UTC with milliseconds (`2026-11-23T12:00:00.123Z`), as every Eventual
/// answer writes them. It formats and parses by arithmetic: Foundation's ISO-8601 formatter
/// costs more than the rest of a barcode look-up on Linux. Reading falls back to Foundation for
/// other RFC 3339 forms (offsets, no fraction), so clients of other services still work.
public struct MillisecondDateTranscoder: DateTranscoder {
    private static let fallback = ISO8601DateTranscoder(options: [.withInternetDateTime, .withFractionalSeconds])
    private static let fallbackWithoutFraction = ISO8601DateTranscoder(options: [.withInternetDateTime])

    public init() {}

    public func encode(_ date: Date) throws -> String {
        Self.text(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` of a Unix time in milliseconds: what `encode` writes for its date.
    public static func text(milliseconds totalMillis: Int64) -> String {
        let days = totalMillis >= 0 ? totalMillis / 86_400_000 : (totalMillis - 86_399_999) / 86_400_000
        let millisOfDay = totalMillis - days * 86_400_000
        let (year, month, day) = civil(fromDays: days)
        var text = ""
        text.reserveCapacity(24)
        append(year, width: 4, to: &text)
        text += "-"
        append(month, width: 2, to: &text)
        text += "-"
        append(day, width: 2, to: &text)
        text += "T"
        append(millisOfDay / 3_600_000, width: 2, to: &text)
        text += ":"
        append(millisOfDay / 60_000 % 60, width: 2, to: &text)
        text += ":"
        append(millisOfDay / 1000 % 60, width: 2, to: &text)
        text += "."
        append(millisOfDay % 1000, width: 3, to: &text)
        text += "Z"
        return text
    }

    public func decode(_ text: String) throws -> Date {
        if let date = Self.parseUTCMillis(text) { return date }
        if let date = try? Self.fallback.decode(text) { return date }
        return try Self.fallbackWithoutFraction.decode(text)
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` exactly, or nil.
    static func parseUTCMillis(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 24, bytes[4] == 0x2d, bytes[7] == 0x2d, bytes[10] == 0x54, bytes[13] == 0x3a,
              bytes[16] == 0x3a, bytes[19] == 0x2e, bytes[23] == 0x5a else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                let digit = bytes[index] &- 0x30
                guard digit < 10 else { return nil }
                value = value * 10 + Int64(digit)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
              let minute = number(14..<16), let second = number(17..<19), let millis = number(20..<23),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        let days = days(fromCivil: year, month, day)
        let total = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis
        return Date(timeIntervalSince1970: Double(total) / 1000)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (the well-known era-based formula).
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day count since 1970-01-01: the inverse of `days(fromCivil:)`.
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
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

    private static func append(_ value: Int64, width: Int, to text: inout String) {
        let digits = String(value)
        if digits.count < width { text += String(repeating: "0", count: width - digits.count) }
        text += digits
    }
}
