import EventualAPI
import Foundation

/// Why the server refuses a pushed change for good; the message goes back to the device as is.
struct SyncRejection: Error, Equatable, Sendable {
    let message: String
    /// Refused only for naming a collection or field no app served here declares: from a device
    /// of a newer version of its app, it waits on the device (`newer_app`) instead of failing.
    var namesOnlyUnknown = false
    init(_ message: String, namesOnlyUnknown: Bool = false) {
        self.message = message
        self.namesOnlyUnknown = namesOnlyUnknown
    }
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
    /// A record sent back after the server was restored (`SyncHistory`): its state as a device
    /// held it, merged by its stamps, never refused for a deletion it predates.
    var restores = false
    /// With `restores`, the stamps its fields were set at and the deltas of its counters (`MergeState`).
    var restoredState: MergeState?
    /// The change made the record on its device (an insert): made again after a deletion, it starts clean.
    var creates = false
}

/// Everything a push is checked for before its merge, in one place, in this order:
/// 1. the whole push: at most `SyncChangeLimits.maxChanges` changes, and no change the push cannot
///    be read with (`SyncChangeLimits`: a control character in an id, a name or a value, an id of a
///    length not allowed): else a 400 naming the change and field, nothing applied;
/// 2. each change against its collection: known collection and fields, values of their types,
///    a stamp not too far ahead of the server's clock: else that change alone is `rejected`.
/// What a merged record must satisfy (its collection's `rules`) and the quotas are checked by the
/// merge (`PushMerge`), which alone knows the record as merged.
///
/// NB: a refusal of the first kind is a 400 rather than one change's `rejected`: a change id that
/// cannot be stored whole cannot be remembered either, and before this check such a batch
/// answered 500 on every retry, stalling the device's outbox for good. The engine refuses such a
/// change on the device by the same rules, so that none of its pushes is refused whole.
struct PushValidation: Sendable {
    /// The apps served, whose collections changes are checked against.
    let catalog: AppCatalog
    /// How far ahead of the server's clock a stamp may be.
    let maxClockDrift: Duration

    init(catalog: AppCatalog = .builtIn, maxClockDrift: Duration) {
        self.catalog = catalog
        self.maxClockDrift = maxClockDrift
    }

    /// Every served collection, by name, as deployed now.
    var collections: [String: SyncCollection] { catalog.collections }

    /// The push's changes as the store takes them (a change without a space goes to `userID`'s
    /// personal one), or the 400 that refuses the push whole.
    func submissions(of changes: [Components.Schemas.SyncChange], by userID: String, now: Int64) throws(APIError) -> [SyncSubmission] {
        guard changes.count <= SyncChangeLimits.maxChanges else {
            throw APIError.badRequest("a push carries at most \(SyncChangeLimits.maxChanges) changes, not \(changes.count):"
                + " send them in several batches")
        }
        for (index, change) in changes.enumerated() { try Self.requireReadable(change, at: "changes[\(index)]") }
        return changes.map { change in
            SyncSubmission(id: change.id, space: change.space ?? userID, change: Result { () throws(SyncRejection) in
                try validate(collection: change.collection, recordID: change.recordId, hlc: change.hlc,
                             fields: change.fields.additionalProperties.value,
                             deltas: change.deltas?.additionalProperties ?? [:], deleted: change.deleted, now: now,
                             restores: change.restores ?? false, state: change.state, creates: change.creates ?? false)
            })
        }
    }

    /// Refuses a change the push cannot be read with (`SyncChangeLimits`): one whose text cannot
    /// be stored whole (a NUL or a control character in an id, a name or a value), or whose change
    /// id or space id is of a length not allowed.
    private static func requireReadable(_ change: Components.Schemas.SyncChange, at path: String) throws(APIError) {
        func require(_ problem: String?, _ field: String) throws(APIError) {
            if let problem { throw APIError.badRequest("\(path).\(field) \(problem)") }
        }
        try require(SyncChangeLimits.problem(withChangeID: change.id), "id")
        try require(SyncChangeLimits.problem(withName: change.collection), "collection")
        try require(SyncChangeLimits.problem(withName: change.recordId), "recordId")
        try require(SyncChangeLimits.problem(withName: change.hlc), "hlc")
        if let space = change.space { try require(SyncChangeLimits.problem(withSpaceID: space), "space") }
        if let state = change.state { try require(SyncChangeLimits.problem(withState: state), "state") }
        for (name, value) in change.fields.additionalProperties.value.sorted(by: { $0.key < $1.key }) {
            try require(SyncChangeLimits.problem(withName: name), "fields (a field name)")
            if let text = value as? String { try require(SyncChangeLimits.problem(withText: text), "fields.\(name)") }
        }
    }

    /// The change in its collection's types, or the rule it breaks. `now` is Unix milliseconds.
    func validate(
        collection name: String, recordID: String, hlc: String, fields: [String: (any Sendable)?],
        deltas: [String: Double] = [:], deleted: Bool, now: Int64, restores: Bool = false, state: String? = nil, creates: Bool = false
    ) throws(SyncRejection) -> ValidatedChange {
        guard let collection = collections[name] else {
            // NB: the device keeps the change (its failures) with this reason; once the app is
            // deployed, a retry is accepted.
            throw SyncRejection("unknown collection '\(name.prefix(64))': no app deployed on this server declares it"
                + " (its operator deploys the app: eventual-server apps deploy FILE)", namesOnlyUnknown: true)
        }
        if let problem = SyncChangeLimits.problem(withRecordIDLength: recordID) { throw SyncRejection("recordId \(problem)") }
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
        var unknown = 0
        for (field, raw) in fields.sorted(by: { $0.key < $1.key }) {
            guard let definition = collection.fields[field] else {
                problems.append("unknown field '\(field)' in \(collection.name)")
                unknown += 1
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
                if collection.fields[field] == nil { unknown += 1 }
                problems.append(collection.fields[field] == nil
                    ? "unknown field '\(field)' in \(collection.name)"
                    : "field '\(field)' is not a counter: set it in fields instead of adding a delta")
            } else if !amount.isFinite {
                problems.append("the delta of '\(field)' must be a finite number")
            }
        }
        var restoredState: MergeState?
        if restores, let state {
            guard let parsed = MergeState(text: state) else {
                throw SyncRejection("state must be a record's merge state as a pull sent it")
            }
            if let newest = parsed.newestStamp, newest.millis > now + drift {
                problems.append("the state of \(recordID) holds a stamp ahead of the server's clock: check the device's clock")
            }
            for field in Set(parsed.stamps.keys).union(parsed.deltas.keys).sorted()
            where collection.fields[field] == nil && field != MergeState.madeKey {
                problems.append("unknown field '\(field)' in \(collection.name)")
            }
            for field in parsed.deltas.keys.sorted() where collection.fields[field] != nil && collection.fields[field]?.type != .counter {
                problems.append("field '\(field)' is not a counter: it has no deltas")
            }
            restoredState = parsed
        }
        guard problems.isEmpty else { throw SyncRejection(problems.joined(separator: "; "), namesOnlyUnknown: unknown == problems.count) }
        // NB: a record made by a device of an earlier version of the app, which does not know a
        // field added since with a default, holds the default, as the version that added it says.
        if creates && !deleted && !restores {
            for (name, field) in collection.fields where values[name] == nil && deltas[name] == nil {
                if let value = field.defaultValue { values[name] = value }
            }
        }
        return ValidatedChange(collection: collection.name, recordID: recordID, stamp: stamp, fields: values,
                               deltas: deltas, deleted: deleted, restores: restores, restoredState: restoredState, creates: creates)
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
            if let problem = SyncChangeLimits.problem(withText: text, of: field) { throw SyncRejection("field '\(name)' \(problem)") }
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
