import EventualAPI
import Foundation
import SQLKit

/// One cell of a question's answer.
enum AnalyticsCell: Sendable, Equatable, CustomStringConvertible {
    case text(String)
    case integer(Int64)
    case number(Double)
    case null

    /// What a column of a question's SQL holds, and so how its cells are read and shown.
    enum Kind: Sendable {
        case text
        case integer
        case number
        /// A day number since 1970-01-01, shown as YYYY-MM-DD.
        case day
        /// A week number counted from Monday 1970-01-05, shown as the date of its Monday.
        case week
    }

    /// Reads `column` of `row` as its kind says. NB: PostgreSQL and SQLite disagree on the types
    /// of computed columns (an average of integers is REAL in one, a ratio may be INTEGER), so a
    /// number is read as either.
    static func decode(_ row: any SQLRow, column: AnalyticsColumn) throws -> AnalyticsCell {
        if try row.decodeNil(column: column.name) { return .null }
        switch column.kind {
        case .text:
            if let text = try? row.decode(column: column.name, as: String.self) { return .text(text) }
            return .text(String(try row.decode(column: column.name, as: Int64.self)))
        case .integer:
            if let whole = try? row.decode(column: column.name, as: Int64.self) { return .integer(whole) }
            return .integer(Int64(try row.decode(column: column.name, as: Double.self).rounded()))
        case .number:
            if let number = try? row.decode(column: column.name, as: Double.self) { return .number(number) }
            return .number(Double(try row.decode(column: column.name, as: Int64.self)))
        case .day:
            return .text(AnalyticsRange.format(day: try row.decode(column: column.name, as: Int64.self)))
        case .week:
            let week = try row.decode(column: column.name, as: Int64.self)
            return .text(AnalyticsRange.format(day: week * 7 + 4))
        }
    }

    var doubleValue: Double? {
        switch self {
        case .integer(let whole): return Double(whole)
        case .number(let number): return number
        case .text, .null: return nil
        }
    }

    /// As CSV and the dashboard's tables show it.
    var description: String {
        switch self {
        case .text(let text): return text
        case .integer(let whole): return String(whole)
        case .number(let number):
            return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(format: "%.2f", number)
        case .null: return ""
        }
    }

    /// For the JSON answer.
    var anyValue: (any Sendable)? {
        switch self {
        case .text(let text): return text
        case .integer(let whole): return Int(whole)
        case .number(let number): return number
        case .null: return nil
        }
    }
}

/// A column of a question's answer: its name in the SQL and the JSON, and what it holds.
struct AnalyticsColumn: Sendable {
    let name: String
    let kind: AnalyticsCell.Kind

    init(_ name: String, _ kind: AnalyticsCell.Kind) {
        self.name = name
        self.kind = kind
    }
}
