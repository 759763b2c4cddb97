/// What a pushed change may carry, spelled once for the server and the engine.
///
/// The server reads a push whole before it merges anything: a change whose id, collection, record
/// id, stamp, space or field name holds a control character, whose text values hold one other than
/// a tab or a line break, whose change id or space id is of a length not allowed, or whose numbers
/// lie outside what a record holds (`SyncValue.holdable`, the range `openapi.yaml` states) makes
/// the whole push a 400, nothing of it applied. The engine refuses such a write on the device,
/// before it enters the outbox (`LocalTransaction.recordChange`), by these same rules: a push
/// refused whole would be sent again, and refused again, for ever, and hold up every change
/// queued after it.
///
/// A record id of a length not allowed, and a text longer than its field allows, the server
/// rejects for the change alone (`rejected`, the rest of the push applied), as it does a value of
/// another type than its field's: such a change fails with the server's words, to be settled.
public enum SyncChangeLimits {
    /// The most changes one push carries.
    public static let maxChanges = 500
    /// Lengths in Unicode code points, as JSON Schema counts them.
    public static let changeIDLengths = 1...128
    public static let spaceIDLengths = 1...128
    /// Lengths in characters.
    public static let recordIDLengths = 1...128

    /// Why an id or a name of a change (its collection, record id, stamp or a field's name) makes
    /// its push unreadable ("must not contain a tab"); nil when it does not.
    public static func problem(withName text: String) -> String? {
        TextRules.problem(in: text, .singleLine).map { "must not contain \($0)" }
    }

    /// Why a text value makes its push unreadable: a control character other than a tab or a line break.
    public static func problem(withText text: String) -> String? {
        TextRules.problem(in: text, .multiLine).map { "must not contain \($0)" }
    }

    /// Why a change id makes its push unreadable.
    public static func problem(withChangeID id: String) -> String? {
        problem(withName: id) ?? lengthProblem(id.unicodeScalars.count, allowed: changeIDLengths)
    }

    /// Why a space id makes its push unreadable.
    public static func problem(withSpaceID id: String) -> String? {
        problem(withName: id) ?? lengthProblem(id.unicodeScalars.count, allowed: spaceIDLengths)
    }

    /// Why a record id's length makes the server reject its change.
    public static func problem(withRecordIDLength id: String) -> String? {
        lengthProblem(id.count, allowed: recordIDLengths).map { "\($0), not \(id.count)" }
    }

    /// Why a merge state sent back after a restore (`SyncChange.state`) makes its push unreadable:
    /// one longer than `MergeState.maxTextLength` code points. A device keeps no state longer than
    /// that (`MergeState(text:)` reads none), and sends such a record back with its fields alone.
    public static func problem(withState state: String) -> String? {
        let length = state.unicodeScalars.count
        guard length > MergeState.maxTextLength else { return nil }
        return "must be at most \(MergeState.maxTextLength) characters long, not \(length)"
    }

    /// Why a number, a field's value or an amount added to a counter, makes its push unreadable.
    public static func problem(withNumber number: Double) -> String? {
        guard !SyncValue.holdable(number) else { return nil }
        return "must be a finite number from -\(SyncValue.largestMagnitude) to \(SyncValue.largestMagnitude), not \(number)"
    }

    /// Why a text is too long for `field`: the server rejects its change.
    public static func problem(withText text: String, of field: SyncField) -> String? {
        guard let maxLength = field.maxLength, text.count > maxLength else { return nil }
        return "must be at most \(maxLength) characters long, not \(text.count)"
    }

    /// The first thing in a change of a record of `collection` that would make the server refuse
    /// its whole push; nil when there is none. What the engine checks before a change enters the outbox.
    public static func problem(inChangeOf collection: SyncCollection, recordID: String, space: String?,
                               fields: [String: SyncValue], deltas: [String: Double]) -> SyncChangeProblem? {
        if let reason = problem(withName: recordID) {
            return SyncChangeProblem(collection: collection.name, subject: "the record id", reason: reason)
        }
        if let space, let reason = problem(withSpaceID: space) {
            return SyncChangeProblem(collection: collection.name, subject: "the space id", reason: reason)
        }
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            let reason: String?
            switch value {
            case .string(let text):
                reason = problem(withText: text)
            case .integer, .number:
                reason = value.doubleValue.flatMap(problem(withNumber:))
            case .boolean, .null:
                reason = nil
            }
            if let reason { return SyncChangeProblem(collection: collection.name, subject: name, reason: reason) }
        }
        for (name, amount) in deltas.sorted(by: { $0.key < $1.key }) {
            if let reason = problem(withNumber: amount) {
                return SyncChangeProblem(collection: collection.name, subject: "the amount added to \(name)", reason: reason)
            }
        }
        return nil
    }

    private static func lengthProblem(_ length: Int, allowed: ClosedRange<Int>) -> String? {
        allowed.contains(length) ? nil : "must be \(allowed.lowerBound) to \(allowed.upperBound) characters long"
    }
}

/// Why the server would refuse a change, as `SyncChangeLimits` finds it.
public struct SyncChangeProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public let collection: String
    /// What of the change: a field's name, "the record id", "the amount added to quantity".
    public let subject: String
    /// What is wrong with it: "must not contain a NUL byte".
    public let reason: String

    public init(collection: String, subject: String, reason: String) {
        self.collection = collection
        self.subject = subject
        self.reason = reason
    }

    /// "name of a pantry_items record must not contain a NUL byte"
    public var description: String { "\(subject) of a \(collection) record \(reason)" }
}
