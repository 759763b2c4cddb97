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
    /// The records each owner stores with the changes taken so far; read at an owner's first new record.
    private var recordCounts: [String: Int] = [:]
    /// The bytes each owner stores with the changes taken so far.
    private var storedBytes: [String: Int64]

    /// Locks the counts of `owners` for the push of `userID`, unless both quotas are unlimited.
    init(records: Int, bytes: Int64, userID: String, owners: Set<String>, on sql: any SQLDatabase) async throws {
        self.userID = userID
        self.records = records
        self.bytes = bytes
        storedBytes = records < .max || bytes < .max ? try await StorageUsage.locked(owners, on: sql) : [:]
    }

    /// Takes what one change adds in `space`: a record when it `creates` one, and `grown` bytes
    /// (negative when it shrinks what is stored); or, taking nothing, says why it is refused.
    mutating func take(creates: Bool, grown: Int64, in space: SpaceAccess, on sql: any SQLDatabase) async throws -> SyncRuleViolation? {
        let owner = space.ownerID
        if creates, records < .max {
            let count: Int
            if let counted = recordCounts[owner] {
                count = counted
            } else {
                count = try await SyncRecordRows.count(ownedBy: owner, on: sql)
            }
            recordCounts[owner] = count
            guard count < records else {
                let whose = owner == userID ? "you store" : "the owner of \(space.name) stores"
                return Self.refusal("Quota reached: \(whose) \(count) synced records, and at most \(records) are allowed."
                    + " Delete records you no longer need (deleting an existing record frees nothing until it is purged)")
            }
        }
        let stored = storedBytes[owner] ?? 0
        let (total, overflow) = stored.addingReportingOverflow(grown)
        if grown > 0, bytes < .max, overflow || total > bytes {
            let whom = owner == userID ? "you" : "the owner of \(space.name)"
            return Self.refusal(StorageUsage.refusal(storing: overflow ? .max : total, quota: bytes, for: whom,
                                                     advice: "Delete records you no longer need, or make this one smaller"))
        }
        if creates, records < .max { recordCounts[owner]! += 1 }
        if !overflow { storedBytes[owner] = total }
        return nil
    }

    private static func refusal(_ message: String) -> SyncRuleViolation {
        SyncRuleViolation(code: SyncRuleViolation.quota, field: "", message: message)
    }
}
