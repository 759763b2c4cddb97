import Foundation
import GRDB

/// A calendar day, as the pantry stores expiries: `YYYY-MM-DD`, no time, no zone; so it is
/// coded too (a field's value, a column's, JSON's).
public struct Day: Sendable, Hashable, Comparable, Codable, CustomStringConvertible, DatabaseValueConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    public init?(year: Int, month: Int, day: Int) {
        var components = DateComponents(year: year, month: month, day: day)
        components.calendar = Calendar(identifier: .gregorian)
        guard (1...9999).contains(year), components.isValidDate else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `YYYY-MM-DD`.
    public init?(iso text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]) else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// The day `date` falls on in `calendar`'s time zone.
    public init(date: Date, calendar: Calendar = .current) {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        year = parts.year!
        month = parts.month!
        day = parts.day!
    }

    public var description: String { String(format: "%04d-%02d-%02d", year, month, day) }

    public var databaseValue: DatabaseValue { description.databaseValue }

    /// NB: a stored text that is not a day reads as none: the hand-written row decoding before it read it so.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Day? {
        String.fromDatabaseValue(value).flatMap(Day.init(iso:))
    }

    public func adding(days: Int, calendar: Calendar = .current) -> Day {
        Day(date: calendar.date(byAdding: .day, value: days, to: noon(calendar))!, calendar: calendar)
    }

    public func adding(months: Int, calendar: Calendar = .current) -> Day {
        Day(date: calendar.date(byAdding: .month, value: months, to: noon(calendar))!, calendar: calendar)
    }

    /// Whole days from `self` to `other` (positive when `other` is later).
    public func days(until other: Day, calendar: Calendar = .current) -> Int {
        calendar.dateComponents([.day], from: noon(calendar), to: other.noon(calendar)).day!
    }

    func noon(_ calendar: Calendar) -> Date {
        calendar.date(from: DateComponents(year: year, month: month, day: day, hour: 12))!
    }

    public static func < (a: Day, b: Day) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let day = Day(iso: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not YYYY-MM-DD: \(text)"))
        }
        self = day
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
