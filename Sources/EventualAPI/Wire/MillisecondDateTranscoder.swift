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
        let (year, month, day) = CivilCalendar.date(ofDay: days)
        var text = ""
        text.reserveCapacity(24)
        CivilCalendar.appendDigits(year, width: 4, to: &text)
        text += "-"
        CivilCalendar.appendDigits(month, width: 2, to: &text)
        text += "-"
        CivilCalendar.appendDigits(day, width: 2, to: &text)
        text += "T"
        CivilCalendar.appendDigits(millisOfDay / 3_600_000, width: 2, to: &text)
        text += ":"
        CivilCalendar.appendDigits(millisOfDay / 60_000 % 60, width: 2, to: &text)
        text += ":"
        CivilCalendar.appendDigits(millisOfDay / 1000 % 60, width: 2, to: &text)
        text += "."
        CivilCalendar.appendDigits(millisOfDay % 1000, width: 3, to: &text)
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
        let days = CivilCalendar.dayNumber(year: year, month: month, day: day)
        let total = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis
        return Date(timeIntervalSince1970: Double(total) / 1000)
    }
}
