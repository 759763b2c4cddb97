import Foundation

/// Reads what a person types for an expiry (`2026-12-24`, `today`, `tomorrow`, `+5d`, `+2w`,
/// `+1m`) or a window (`3d`, `2w`, `3`).
public struct ExpiryParser: Sendable {
    public let calendar: Calendar

    public init(calendar: Calendar = .current) {
        self.calendar = calendar
    }

    /// The expiry day of `text`, counted from `now` for relative forms.
    public func expiry(_ text: String, now: Date = Date()) throws(PantryError) -> Day {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if let day = Day(iso: trimmed) { return day }
        let today = Day(date: now, calendar: calendar)
        // NB: what a person says of a label ("use by tomorrow"), as `RelativeDay` prints it back.
        switch trimmed {
        case "today": return today
        case "tomorrow": return today.adding(days: 1, calendar: calendar)
        default: break
        }
        guard trimmed.hasPrefix("+"), let offset = Self.offset(String(trimmed.dropFirst())) else { throw .invalidExpiry(text) }
        switch offset.unit {
        case .day: return today.adding(days: offset.count, calendar: calendar)
        case .week: return today.adding(days: offset.count * 7, calendar: calendar)
        case .month: return today.adding(months: offset.count, calendar: calendar)
        }
    }

    /// A window in days: `3d`, `2w` or a bare number of days.
    public func days(_ text: String) throws(PantryError) -> Int {
        guard let offset = Self.offset(text.trimmingCharacters(in: .whitespaces).lowercased()), offset.unit != .month else {
            throw .invalidWindow(text)
        }
        return offset.unit == .week ? offset.count * 7 : offset.count
    }

    private enum Unit { case day, week, month }

    private static func offset(_ text: String) -> (count: Int, unit: Unit)? {
        var digits = Substring(text)
        var unit = Unit.day
        switch text.last {
        case "d": digits = digits.dropLast()
        case "w": digits = digits.dropLast(); unit = .week
        case "m": digits = digits.dropLast(); unit = .month
        default: break
        }
        guard let count = Int(digits), count >= 0, count <= 36_500 else { return nil }
        return (count, unit)
    }
}
