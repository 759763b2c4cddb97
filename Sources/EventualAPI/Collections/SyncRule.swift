/// A rule a collection's records keep, checked on the record as merged: by the server on every
/// pushed change before it is written, and by the device before a local write, with the same
/// evaluator (`SyncCollection.violation`), so the two say the same words.
public enum SyncRule: Sendable, Hashable {
    /// A number (a counter: a pantry quantity) that a change must not take below `minimum`.
    case notBelow(_ field: String, _ minimum: Double)
    /// A string from a closed set (a pantry item's status).
    case oneOf(_ field: String, _ allowed: [String])
    /// The id of a record of `collection` that exists (not deleted) where the writer can see it,
    /// and whose fields equal this record's: `matching` maps a field here to a field there (a
    /// transaction's account, in the transaction's currency). A null or absent id refers to nothing.
    case refersTo(_ field: String, collection: String, matching: [String: String] = [:])
    /// A record whose `field` holds none of `open` (a pantry item consumed or thrown away) takes
    /// no change that leaves `field` as it is: an edit made on a device that had not heard of it
    /// is refused (`set_aside`), never merged into a record nobody looks at. A change that sets
    /// `field` back to one of `open` (`settle --keep-mine` sets the first) takes the edit with it.
    case editableWhile(_ field: String, _ open: [String])

    /// The field the rule is about.
    public var field: String {
        switch self {
        case .notBelow(let field, _), .oneOf(let field, _), .refersTo(let field, _, _), .editableWhile(let field, _): return field
        }
    }
}

/// Why a record breaks one of its collection's rules.
public struct SyncRuleViolation: Error, Sendable, Hashable {
    /// Which rule: `below_minimum`, `not_allowed`, `missing_reference`, `mismatched_reference` or
    /// `out_of_range` (a number no record may hold, whatever its collection: see `SyncValue.holdable`).
    public let code: String
    /// The field the rule is about.
    public let field: String
    /// A sentence a person reads.
    public let message: String

    public init(code: String, field: String, message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    public static let belowMinimum = "below_minimum"
    public static let notAllowed = "not_allowed"
    public static let missingReference = "missing_reference"
    public static let mismatchedReference = "mismatched_reference"
    public static let outOfRange = "out_of_range"
    /// Not a rule's: a change of a record deleted by a newer change, which it does not bring
    /// back. Refused so that its author hears it, rather than see it vanish.
    public static let deleted = "deleted"
    /// An `editableWhile` rule's: a change of a record set aside (consumed, thrown away) by a change it had not seen.
    public static let setAside = "set_aside"
    /// Not a rule's: a change that would take the owner of its space past a quota (a new record
    /// past their synced records, or bytes past what they may store). Refused alone: the rest of
    /// its push applies, and it waits among the failures until the person discards it or, once
    /// there is room, sends it again.
    public static let quota = "quota"
}

extension SyncCollection {
    /// The first rule a write breaks, or nil. `merged` is every field of the record after the
    /// write, `previous` before it (nil for a new record). A rule is checked only where the write
    /// moves its field (or a matched field) — a counter only when it goes down — so a record that
    /// broke a rule before the rule existed can still be edited and brought back within it.
    /// `lookup` answers a record of a collection by id, nil when missing or deleted; an error it
    /// throws propagates (a failure of storage, not a broken rule). Pure: no I/O of its own.
    /// `restoring`: the write is a record sent back after a restore (`SyncChange.restores`), what
    /// was merged before, no person's edit: `editableWhile` does not apply to it.
    public func violation(
        merged: [String: SyncValue], previous: [String: SyncValue]?, restoring: Bool = false,
        lookup: (_ collection: String, _ recordID: String) throws -> [String: SyncValue]?
    ) rethrows -> SyncRuleViolation? {
        // NB: every number a record holds stays where every device and database holds it exactly,
        // whatever its collection's rules: two counters of 1e308 must not add up to infinity.
        for (field, value) in merged.sorted(by: { $0.key < $1.key }) where value != previous?[field] {
            guard let number = value.doubleValue, !SyncValue.holdable(number) else { continue }
            return SyncRuleViolation(code: SyncRuleViolation.outOfRange, field: field,
                                     message: "\(field) cannot be \(Self.describe(number)): a number of a record lies between"
                                         + " -\(SyncValue.largestMagnitude) and \(SyncValue.largestMagnitude)")
        }
        for rule in rules {
            let value = merged[rule.field] ?? .null
            let before = previous.map { $0[rule.field] ?? .null }
            switch rule {
            case .notBelow(let field, let minimum):
                guard let number = value.doubleValue, number < minimum else { continue }
                if let old = before?.doubleValue, number >= old { continue }
                let left = before?.doubleValue.map { "Only \(Self.describe($0)) left: " } ?? ""
                return SyncRuleViolation(code: SyncRuleViolation.belowMinimum, field: field,
                                         message: "\(left)\(field) cannot go below \(Self.describe(minimum)) (it would be \(Self.describe(number)))")
            case .oneOf(let field, let allowed):
                guard value != before, value != .null else { continue }
                if case .string(let text) = value, allowed.contains(text) { continue }
                return SyncRuleViolation(code: SyncRuleViolation.notAllowed, field: field,
                                         message: "\(field) cannot be \(Self.quoted(value)): it is one of \(allowed.joined(separator: ", "))")
            case .editableWhile(let field, let open):
                // NB: set aside is a value outside `open`; a record that has none (never set) is not.
                guard !restoring, let previous, case .string(let text) = before, value == before, merged != previous,
                      !open.contains(text) else { continue }
                return SyncRuleViolation(code: SyncRuleViolation.setAside, field: field,
                                         message: "Its \(field) is \(Self.quoted(.string(text))) (maybe set on another device or by another member):"
                                             + " an edit does not bring it back unless it sets \(field) to '\(open.first ?? "")'")
            case .refersTo(let field, let collection, let matching):
                let moved = previous == nil || value != before
                    || matching.keys.contains { (merged[$0] ?? .null) != (previous?[$0] ?? .null) }
                guard moved, value != .null else { continue }
                guard case .string(let id) = value, let target = try lookup(collection, id) else {
                    return SyncRuleViolation(code: SyncRuleViolation.missingReference, field: field,
                                             message: "\(field) names \(Self.quoted(value)), which is no record of \(collection) you can see"
                                                 + " (never made, deleted, or in a space you are not in)")
                }
                for (mine, theirs) in matching.sorted(by: { $0.key < $1.key }) {
                    let here = merged[mine] ?? .null, there = target[theirs] ?? .null
                    guard here != there else { continue }
                    return SyncRuleViolation(code: SyncRuleViolation.mismatchedReference, field: field,
                                             message: "\(mine) is \(Self.quoted(here)) but the \(collection) record \(id) that \(field) names"
                                                 + " has \(theirs) \(Self.quoted(there)): they must be the same")
                }
            }
        }
        return nil
    }

    /// A number as a person writes it: 2, not 2.0.
    private static func describe(_ number: Double) -> String {
        Int64(exactly: number).map(String.init) ?? String(number)
    }

    private static func quoted(_ value: SyncValue) -> String {
        switch value {
        case .null: return "nothing"
        case .string(let text): return "'\(text.prefix(100))'"
        case .integer(let number): return String(number)
        case .number(let number): return describe(number)
        case .boolean(let flag): return String(flag)
        }
    }
}
