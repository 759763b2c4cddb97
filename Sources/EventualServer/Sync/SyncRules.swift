import EventualAPI
import Foundation

/// Why the server refuses a pushed change for good; the message goes back to the device as is.
struct SyncRejection: Error, Equatable, Sendable {
    let message: String
    init(_ message: String) { self.message = message }
}

/// A pushed change that passed validation, its values in their collection's types.
struct ValidatedChange: Sendable, Equatable {
    let collection: String
    let recordID: String
    let stamp: HLCStamp
    let fields: [String: SyncValue]
    /// Amounts added to counter fields.
    let deltas: [String: Double]
    let deleted: Bool
}

/// What a push may carry: the registered collections and their fields, and how far ahead of the
/// server's clock a stamp may be.
struct SyncRules: Sendable {
    static let recordIDLengths = 1...128

    let collections: [String: SyncCollection]
    let maxClockDrift: Duration

    init(collections: [String: SyncCollection] = SyncCollections.all, maxClockDrift: Duration) {
        self.collections = collections
        self.maxClockDrift = maxClockDrift
    }

    /// The change in its collection's types, or the rule it breaks. `now` is Unix milliseconds.
    func validate(
        collection name: String, recordID: String, hlc: String, fields: [String: (any Sendable)?],
        deltas: [String: Double] = [:], deleted: Bool, now: Int64
    ) throws(SyncRejection) -> ValidatedChange {
        guard let collection = collections[name] else {
            let known = collections.keys.sorted().joined(separator: ", ")
            throw SyncRejection("unknown collection '\(name)' (known: \(known))")
        }
        guard Self.recordIDLengths.contains(recordID.count) else {
            throw SyncRejection("recordId must be 1 to \(Self.recordIDLengths.upperBound) characters long, not \(recordID.count)")
        }
        guard let stamp = HLCStamp(parsing: hlc) else {
            throw SyncRejection("hlc '\(hlc.prefix(100))' is not a stamp of the form <13-digit Unix ms>-<5-digit counter>-<node id>")
        }
        let drift = maxClockDrift.milliseconds
        guard stamp.millis <= now + drift else {
            throw SyncRejection("hlc \(hlc) is \((stamp.millis - now) / 1000) s ahead of the server's clock"
                + " (at most \(drift / 1000) s allowed): check the device's clock")
        }
        var values: [String: SyncValue] = [:]
        var problems: [String] = []
        for (field, raw) in fields.sorted(by: { $0.key < $1.key }) {
            guard let definition = collection.fields[field] else {
                problems.append("unknown field '\(field)' in \(collection.name)")
                continue
            }
            do {
                values[field] = try Self.value(raw, for: definition, named: field)
            } catch {
                problems.append(error.message)
            }
        }
        for (field, amount) in deltas.sorted(by: { $0.key < $1.key }) {
            if collection.fields[field]?.type != .counter {
                problems.append(collection.fields[field] == nil
                    ? "unknown field '\(field)' in \(collection.name)"
                    : "field '\(field)' is not a counter: set it in fields instead of adding a delta")
            } else if !amount.isFinite {
                problems.append("the delta of '\(field)' must be a finite number")
            }
        }
        guard problems.isEmpty else { throw SyncRejection(problems.joined(separator: "; ")) }
        return ValidatedChange(collection: collection.name, recordID: recordID, stamp: stamp, fields: values,
                               deltas: deltas, deleted: deleted)
    }

    /// `raw` (a value of the generated JSON containers) checked against a field's definition.
    static func value(_ raw: (any Sendable)?, for field: SyncField, named name: String) throws(SyncRejection) -> SyncValue {
        guard let raw else {
            guard field.nullable else { throw SyncRejection("field '\(name)' cannot be null") }
            return .null
        }
        let wrongType = SyncRejection("field '\(name)' must be \(describe(field.type)), not \(describe(raw))")
        switch field.type {
        case .string, .date:
            guard let text = raw as? String else { throw wrongType }
            if field.type == .date {
                guard isCalendarDate(text) else {
                    throw SyncRejection("field '\(name)' must be a calendar date YYYY-MM-DD, not '\(text.prefix(40))'")
                }
            }
            if let maxLength = field.maxLength, text.count > maxLength {
                throw SyncRejection("field '\(name)' must be at most \(maxLength) characters long, not \(text.count)")
            }
            return .string(text)
        case .integer:
            if raw is Bool { throw wrongType }
            if let number = raw as? Int { return .integer(Int64(number)) }
            guard let number = raw as? Double else { throw wrongType }
            guard let whole = Int64(exactly: number) else {
                throw SyncRejection("field '\(name)' must be a whole number (an integer), not \(number)")
            }
            return .integer(whole)
        case .number, .counter:
            if raw is Bool { throw wrongType }
            if let number = raw as? Int { return .integer(Int64(number)) }
            guard let number = raw as? Double else { throw wrongType }
            return .number(number)
        case .boolean:
            guard let flag = raw as? Bool else { throw wrongType }
            return .boolean(flag)
        }
    }

    /// Whether `text` is exactly `YYYY-MM-DD` and names a day of the Gregorian calendar.
    static func isCalendarDate(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return false }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              year >= 1, (1...12).contains(month)
        else { return false }
        let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day)
    }

    private static func describe(_ type: SyncFieldType) -> String {
        switch type {
        case .string: return "a string"
        case .integer: return "an integer"
        case .number, .counter: return "a number"
        case .boolean: return "a boolean"
        case .date: return "a date string YYYY-MM-DD"
        }
    }

    private static func describe(_ value: any Sendable) -> String {
        switch value {
        case is Bool: return "a boolean"
        case is Int: return "an integer"
        case is Double: return "a number"
        case is String: return "a string"
        case is [(any Sendable)?]: return "an array"
        case is [String: (any Sendable)?]: return "an object"
        default: return "a \(type(of: value))"
        }
    }
}
