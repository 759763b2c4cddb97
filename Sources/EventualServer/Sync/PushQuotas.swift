import EventualAPI
import SQLKit

/// What the owners of a push's spaces may still store, taken change by change in the batch's
/// order (a space's records count against its owner): a change that would add a record past its
/// owner's record quota, or grow what they store past the byte quota, is refused alone, with the
/// code `quota`, and what it would have taken is not counted for the changes after it. Edits and
/// deletions of stored records add no record, and a change that shrinks what is stored always goes.
///
/// NB: the counts are read under a lock on each owner's `storage_usage` row, taken when the merge
/// begins (`StorageUsage.locked`), so that two pushes for one owner (to two of their spaces)
/// decide one after the other, and what this one lets through is what it commits.
struct PushQuotas {
    private let userID: String
    private let records: Int
    private let bytes: Int64
    /// The live records each owner stored before the push; read at an owner's first new record.
    private var storedRecords: [String: Int] = [:]
    /// What the changes taken so far add to each owner's live records (a deletion takes one away).
    private var takenRecords: [String: Int] = [:]
    /// The bytes each owner stores with the changes taken so far.
    private var storedBytes: [String: Int64]

    /// Locks the counts of `owners` for the push of `userID`, unless both quotas are unlimited.
    init(records: Int, bytes: Int64, userID: String, owners: Set<String>, on sql: any SQLDatabase) async throws {
        self.userID = userID
        self.records = records
        self.bytes = bytes
        storedBytes = records < .max || bytes < .max ? try await StorageUsage.locked(owners, on: sql) : [:]
    }

    /// Takes what one change does in `space`: a live record more when it `creates` one (a record
    /// new or deleted before), one less when it `deletes` a live one, and `grown` bytes (negative
    /// when it shrinks what is stored); or, taking nothing, says why it is refused.
    mutating func take(creates: Bool, deletes: Bool = false, grown: Int64, in space: SpaceAccess,
                       on sql: any SQLDatabase) async throws -> SyncRuleViolation? {
        let owner = space.ownerID
        if creates, records < .max {
            if storedRecords[owner] == nil { storedRecords[owner] = try await SyncRecordRows.count(ownedBy: owner, on: sql) }
            let count = storedRecords[owner]! + takenRecords[owner, default: 0]
            guard count < records else { return recordRefusal(count, in: space, whose: owner == userID ? nil : owner) }
        }
        let stored = storedBytes[owner] ?? 0
        let (total, overflow) = stored.addingReportingOverflow(grown)
        if grown > 0, bytes < .max, overflow || total > bytes {
            let whom = owner == userID ? "you" : "the owner of \(space.name)"
            return Self.refusal(StorageUsage.refusal(storing: overflow ? .max : total, quota: bytes, for: whom,
                                                     advice: "Delete records you no longer need, or make this one smaller"))
        }
        if creates { takenRecords[owner, default: 0] += 1 }
        if deletes { takenRecords[owner, default: 0] -= 1 }
        if !overflow { storedBytes[owner] = total }
        return nil
    }

    /// The words of a new record past the quota: whose it is (nil: the pusher's own) and what frees room.
    private func recordRefusal(_ count: Int, in space: SpaceAccess, whose owner: String?) -> SyncRuleViolation {
        guard owner != nil else {
            return Self.refusal("Quota reached: you store \(count) synced records, and at most \(records) are allowed."
                + " They count in every app you use: delete records you no longer need, and each deletion frees its place at once")
        }
        return Self.refusal("Quota reached: the owner of \(space.name) stores \(count) synced records, and at most"
            + " \(records) are allowed: a shared space's records count against its owner."
            + " Ask them to make room, or delete records of \(space.name) you no longer need")
    }

    private static func refusal(_ message: String) -> SyncRuleViolation {
        SyncRuleViolation(code: SyncRuleViolation.quota, field: "", message: message)
    }
}
