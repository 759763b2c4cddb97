import EventualAPI
import EventualStorage
import Foundation
import SQLKit

/// A pushed change as the store receives it: its id, the space it writes to, and the validated
/// change or why it was refused.
struct SyncSubmission: Sendable {
    let id: String
    let space: String
    let change: Result<ValidatedChange, SyncRejection>
}

/// What became of one pushed change.
enum SyncOutcome: Sendable, Equatable {
    case applied
    case duplicate
    case rejected(String)
    /// Merged, the record would break one of its collection's rules: not written. `current` is
    /// the server's record as the push left it (nil when it holds none).
    case refused(SyncRuleViolation, current: SyncedRecord?)
}

/// A record as a pull returns it: its space, its merged fields, whether it is deleted, its newest
/// stamp, the counter value of its last change and the username of whoever made it (nil if unknown).
struct SyncedRecord: Sendable, Equatable {
    let space: String
    let collection: String
    let recordID: String
    let fields: [String: SyncValue]
    let isDeleted: Bool
    let newestStamp: HLCStamp?
    let seq: Int64
    let changedBy: String?

    init(space: String, collection: String, recordID: String, fields: [String: SyncValue], isDeleted: Bool, newestStamp: HLCStamp?,
         seq: Int64, changedBy: String?) {
        self.space = space
        self.collection = collection
        self.recordID = recordID
        self.fields = fields
        self.isDeleted = isDeleted
        self.newestStamp = newestStamp
        self.seq = seq
        self.changedBy = changedBy
    }

    init(space: String, collection: String, recordID: String, state: SyncRecordState, seq: Int64, changedBy: String?) {
        self.init(space: space, collection: collection, recordID: recordID, fields: state.fields, isDeleted: state.isDeleted,
                  newestStamp: state.newestStamp, seq: seq, changedBy: changedBy)
    }

    /// A record as a pull reads it. NB: a pull of a first sync reads tens of thousands of rows:
    /// decoding their stamps and counter deltas (all a merge needs) took half of the server's time,
    /// and a pull needs only the newest stamp, and `deleted`, which the row says (NULL only for a
    /// row from before migration 12, which is then read whole).
    init(space: String, collection: String, recordID: String, pulled columns: SyncRecordState.Columns, deleted: Int?,
         seq: Int64, changedBy: String?) throws {
        guard let deleted else {
            self.init(space: space, collection: collection, recordID: recordID, state: try SyncRecordState(columns), seq: seq,
                      changedBy: changedBy)
            return
        }
        self.init(space: space, collection: collection, recordID: recordID, fields: try SyncRecordState.fields(of: columns),
                  isDeleted: deleted == 1,
                  newestStamp: [SyncRecordState.newestStamp(in: [columns.fieldStamps, columns.counterDeltas]),
                                columns.tombstone.flatMap(HLCStamp.init(parsing:))].compactMap { $0 }.max(),
                  seq: seq, changedBy: changedBy)
    }
}

/// One page of a pull.
struct SyncPage: Sendable {
    let records: [SyncedRecord]
    /// The position reached in each of the person's spaces (unchanged where nothing was new).
    let cursor: SyncCursor
    /// Some space has more changes after `cursor`.
    let hasMore: Bool
    /// Every space the person is a member of, in the order the page reads them.
    let spaces: [SpaceMembership]
    /// The spaces the cursor asked about that the person is no longer a member of.
    let removed: [SpaceName]
    /// The members of each shared space in `spaces`, the owner first, by space id.
    var members: [String: [SpaceDetails.Member]] = [:]
    /// How many records the subscription has still to send after this page, when asked.
    var remaining: Int? = nil
}

/// Spaces' synced records: pushes merged per field, and pulls of what changed after a cursor.
///
/// Why a cursor never skips a change: every record carries `seq`, a value of its space's counter
/// (`sync_counters`) taken by the push that last changed it, and a pull returns, space by space,
/// `seq > ` the cursor's position in that space. A push locks the counter rows of its spaces as
/// its first statement (in id order, so that two pushes sharing spaces cannot deadlock; `FOR
/// UPDATE` on PostgreSQL; on SQLite the single writer connection is already exclusive) and holds
/// them until it commits. So the pushes to one space run one after the other: a push cannot take
/// seq values of a space until the previous one has committed or rolled back (and a rollback
/// undoes its counter update too, so its values are reused, not lost). Seq values of a space
/// therefore become visible in increasing order, and a pull's read of a space, a single statement
/// on one snapshot, sees every seq up to the newest committed one and none above it. Anything
/// committed after that read gets a seq above every seq it could return, so `seq > position`
/// finds it. (A database sequence would not do: a transaction may take value 7, commit after
/// another one took and committed 8, and a pull between the two commits moves its cursor past 7
/// for ever.)
///
/// The lock also serialises the merges themselves: a push reads the records it changes after it
/// holds the lock, so it always merges into the latest committed state; and it reads the pusher's
/// roles after it, so a change of members (which takes the same lock) is never half seen.
///
/// Rules (`SyncCollection.rules`) are checked on each record as merged, before it is written, in
/// the push's transaction: a change that breaks one is refused alone and the rest of the batch
/// applies. Two consumptions of the last unit cannot both pass, since the second push merges
/// into what the first committed. A rule's lookups see the batch's earlier changes; those in the
/// record's own space read under its lock, those in the pusher's other spaces (a transfer from a
/// personal account into a shared one) read their latest committed state.
struct SyncStore: Sendable {
    /// Rows per multi-row INSERT, well under SQLite's and PostgreSQL's limits on bound values.
    static let rowsPerStatement = 100

    let database: Database
    /// The collections whose rules pushes are checked against.
    var collections: [String: SyncCollection] = SyncCollections.all

    private struct RecordKey: Hashable {
        let space: String
        let collection: String
        let recordID: String
    }

    /// What a pusher may do in one space of their batch, read under the space's counter lock.
    private struct SpaceAccess {
        let name: String
        let ownerID: String
        let lastSeq: Int64
        /// Why the pusher's changes to the space are refused; nil when they may write.
        let refusal: String?
        let kind: SpaceKind
        /// The app whose records a shared space holds; nil for a personal one, or one not claimed yet.
        var app: String?
    }

    /// Applies a batch in one transaction and answers each change, in order. A batch that would
    /// take a space's owner past `quota` records or past `byteQuota` stored bytes is refused whole
    /// (`Refusal.quotaExceeded`).
    func push(_ submissions: [SyncSubmission], userID: String, now: Int64, quota: Int = .max,
              byteQuota: Int64 = .max) async throws -> [SyncOutcome] {
        try await database.transaction { sql in
            let spaceIDs = Set(submissions.map(\.space)).sorted()
            var access = try await lockSpaces(spaceIDs, for: userID, now: now, on: sql)
            var appliedIDs = try await appliedChangeIDs(among: submissions.map(\.id), of: userID, on: sql)
            let keys = submissions.compactMap { submission -> RecordKey? in
                guard case .success(let change) = submission.change, let space = access[submission.space], space.refusal == nil
                else { return nil }
                return RecordKey(space: submission.space, collection: change.collection, recordID: change.recordID)
            }
            let stored = try await states(of: keys, on: sql)
            var records = stored.mapValues(\.state)
            let existing = Set(records.keys)
            let referenced = try await referencedStates(by: submissions, in: stored, allowed: access, of: userID, on: sql)
            // Where a rule's lookup may find a record: the spaces the batch writes, and those its references were read in.
            let searched = Set(access.filter { $0.value.refusal == nil }.keys).union(referenced.keys.map(\.space)).sorted()
            /// The fields of a live record the pusher can see: in `space` first, else in another of their spaces.
            func visible(_ collection: String, _ recordID: String, from space: String) -> [String: SyncValue]? {
                for candidate in [space] + searched.filter({ $0 != space }) {
                    let key = RecordKey(space: candidate, collection: collection, recordID: recordID)
                    if let state = records[key] ?? referenced[key], !state.isDeleted { return state.fields }
                }
                return nil
            }
            var refusals: [(index: Int, key: RecordKey, violation: SyncRuleViolation)] = []

            var outcomes: [SyncOutcome] = []
            var newlyApplied: [String] = []
            var changedKeys: [RecordKey] = []
            var changedKeySet = Set<RecordKey>()
            var authors: [RecordKey: String] = [:]
            for submission in submissions {
                guard !appliedIDs.contains(submission.id) else {
                    outcomes.append(.duplicate)
                    continue
                }
                switch submission.change {
                case .failure(let rejection):
                    outcomes.append(.rejected(rejection.message))
                case .success(let change):
                    guard let space = access[submission.space] else {
                        outcomes.append(.rejected(Self.notAMember(submission.space)))
                        continue
                    }
                    if let refusal = space.refusal {
                        outcomes.append(.rejected(refusal))
                        continue
                    }
                    // A shared space holds one app's records: the first one filed claims an unclaimed space.
                    if space.kind == .shared, let app = collections[change.collection]?.app.rawValue {
                        if let claimed = space.app, claimed != app {
                            outcomes.append(.rejected("\(space.name) is shared in another app: it holds no \(change.collection) records"))
                            continue
                        }
                        if space.app == nil {
                            try await sql.raw("UPDATE spaces SET app = \(bind: app) WHERE id = \(bind: submission.space) AND app IS NULL").run()
                            access[submission.space]?.app = app
                        }
                    }
                    let key = RecordKey(space: submission.space, collection: change.collection, recordID: change.recordID)
                    let before = records[key]
                    var state = before ?? SyncRecordState()
                    let newestBefore = state.newestStamp
                    // NB: the author of a record is whoever made its newest applied change: a change that
                    // lost every comparison, or won only older ground, leaves the author shown as it was.
                    let authored = state.apply(change) && newestBefore.map { change.stamp > $0 } ?? true
                    // NB: a change made before a deletion it reaches after changes nothing: its author is told, not left to think it applied.
                    if before?.isDeleted == true, state.isDeleted, !change.deleted {
                        let violation = SyncRuleViolation(code: SyncRuleViolation.deleted, field: "",
                                                          message: "It was deleted on another device or by another member before this change reached the server")
                        refusals.append((outcomes.count, key, violation))
                        outcomes.append(.rejected(violation.message))
                        continue
                    }
                    if let collection = collections[change.collection], !state.isDeleted,
                       let violation = collection.violation(merged: state.fields, previous: before.flatMap { $0.isDeleted ? nil : $0.fields },
                                                            lookup: { visible($0, $1, from: submission.space) })
                    {
                        refusals.append((outcomes.count, key, violation))
                        outcomes.append(.rejected(violation.message))
                        continue
                    }
                    // NB: a change that lost every comparison still moves its record to a new seq.
                    // Its device skipped the winning values in an earlier pull (its own edit was
                    // pending then, and pending edits are never overwritten); this brings them back.
                    if changedKeySet.insert(key).inserted { changedKeys.append(key) }
                    if authored { authors[key] = userID }
                    records[key] = state
                    appliedIDs.insert(submission.id)
                    newlyApplied.append(submission.id)
                    outcomes.append(.applied)
                }
            }

            // A space's records count against its owner.
            let created = Dictionary(grouping: changedKeys.lazy.filter { !existing.contains($0) }) { access[$0.space]!.ownerID }
            if quota < .max {
                for (ownerID, keys) in created.sorted(by: { $0.key < $1.key }) {
                    let stored = try await recordCount(ownedBy: ownerID, on: sql)
                    guard stored + keys.count <= quota else {
                        let whose = ownerID == userID ? "you store" : "the owner of \(access[keys[0].space]!.name) stores"
                        throw Refusal.quotaExceeded("Quota reached: \(whose) \(stored) synced records and this push adds \(keys.count);"
                            + " at most \(quota) are allowed. Delete records you no longer need (deleting an existing record frees nothing"
                            + " until it is purged), or push fewer new ones")
                    }
                }
            }
            try await recordApplied(newlyApplied, userID: userID, now: now, on: sql)
            var nextSeq = access.mapValues(\.lastSeq)
            let rows = try changedKeys.map { key in
                nextSeq[key.space]! += 1
                return (key: key, columns: try records[key]!.columns(), seq: nextSeq[key.space]!, deleted: records[key]!.isDeleted)
            }
            var grown: [String: Int64] = [:]
            for row in rows {
                grown[access[row.key.space]!.ownerID, default: 0] += StorageUsage.bytes(of: row.columns) - (stored[row.key]?.bytes ?? 0)
            }
            for (ownerID, bytes) in grown.sorted(by: { $0.key < $1.key }) {
                try await StorageUsage.add(bytes, for: ownerID, quota: byteQuota, on: sql)
            }
            try await save(rows, authors: authors, now: now, on: sql)
            for (space, seq) in nextSeq.sorted(by: { $0.key < $1.key }) where seq != access[space]!.lastSeq {
                try await sql.update("sync_counters").set("last_seq", to: seq).where("space_id", .equal, space).run()
            }
            if !refusals.isEmpty {
                // NB: read after the save, so that `current` is what a pull would now return.
                let current = try await syncedRecords(refusals.map(\.key), on: sql)
                for refusal in refusals { outcomes[refusal.index] = .refused(refusal.violation, current: current[refusal.key]) }
            }
            return outcomes
        }
    }

    /// The records of every space `userID` is a member of changed after `cursor`, space by space
    /// (the personal one first, then by id), oldest change first in each, at most `limit` in all;
    /// only those `subscription` takes (nil: every collection). A nil `cursor` is a first pull:
    /// no deleted record is sent (see `SyncCursor`). `counting` adds how many records remain after
    /// the page. A cursor older than the deletions the server still keeps is refused
    /// (`Refusal.gone`): the device must start over.
    func pull(userID: String, after cursor: SyncCursor?, limit: Int, subscription: PullSubscription? = nil,
              counting: Bool = false) async throws -> SyncPage {
        try await database.withConnection { sql in
            let spaces = try await SpaceStore.memberships(of: userID, on: sql)
            let current = Set(spaces.map(\.id))
            let isPostgres = sql.dialect.name == "postgresql"
            var removed: [SpaceName] = []
            if cursor?.isEmpty ?? true {
                // NB: a pull from nothing holds no space, yet its device may hold records it wrote
                // offline to a space the person has left since: every space they left is said.
                removed = try await SpaceStore.formerSpaces(of: userID, on: sql).filter { !current.contains($0.id) }
            } else if let cursor, cursor.keeping(only: current) != cursor {
                removed = try await SpaceStore.formerSpaces(of: userID, on: sql).filter { !current.contains($0.id) && cursor.holds($0.id) }
            }
            var next = cursor?.keeping(only: current) ?? SyncCursor()
            let held = next
            let heads = cursor == nil ? try await lastSeqs(of: spaces.map(\.id), on: sql) : [:]
            for space in spaces where !next.holds(space.id) {
                if cursor == nil { next.startFresh(space.id, head: heads[space.id] ?? 0) } else { next.set(0, for: space.id) }
            }
            let from = next
            var records: [SyncedRecord] = []
            var hasMore = false
            for (index, space) in spaces.enumerated() {
                let room = limit - records.count
                guard room > 0 else {
                    hasMore = try await anyChange(in: spaces[index...].map(\.id), after: from, subscription, isPostgres: isPostgres, on: sql)
                    break
                }
                let page = try await changes(in: space.id, after: from, subscription, isPostgres: isPostgres, limit: room + 1, on: sql)
                records += page.prefix(room)
                if let last = page.prefix(room).last { next.set(last.seq, for: space.id) }
                if page.count > room {
                    hasMore = true
                    break
                }
            }
            // NB: read after the records: a purge that removed a deletion this page would have
            // sent has committed by now, and is seen here.
            try await refuseIfExpired(held, spaces: spaces.map(\.id), on: sql)
            var remaining: Int?
            if counting {
                remaining = hasMore ? try await count(in: spaces.map(\.id), after: next, subscription, isPostgres: isPostgres, on: sql) : 0
            }
            // NB: who is in each space travels with every page, so that each device of each member names the same people.
            let members = try await SpaceStore.members(of: spaces.filter { $0.kind == .shared }.map(\.id), on: sql)
                .mapValues(SpaceStore.ordered)
            return SyncPage(records: records, cursor: next, hasMore: hasMore, spaces: spaces, removed: removed, members: members,
                            remaining: remaining)
        }
    }

    /// The condition on `r` of a space's records a pull from `cursor` sends.
    private static func pulled(in spaceID: String, after cursor: SyncCursor, _ subscription: PullSubscription?,
                               isPostgres: Bool) -> SQLQueryString {
        var condition: SQLQueryString = "r.space_id = \(bind: spaceID) AND r.seq > \(bind: cursor.position(of: spaceID))"
        if let head = cursor.head(of: spaceID) {
            // NB: `deleted` is NULL for a row the server has not classified yet (written before
            // migration 12, until housekeeping settles it): sent, as a live record would be.
            condition += " AND NOT (r.deleted = 1 AND r.seq <= \(bind: head))"
        }
        if let subscription { condition += " AND " + subscription.condition(isPostgres: isPostgres) }
        return condition
    }

    /// The records `recordIDs` of `collection` in the space as they stand, deleted ones too, in the
    /// order asked (those that do not exist left out), for a member of the space (else
    /// `SpaceStore.notAMember`; a personal space not made yet holds nothing).
    func records(_ recordIDs: [String], of collection: String, in spaceID: String, for userID: String) async throws -> [SyncedRecord] {
        try await database.withConnection { sql in
            let member = try await sql.raw("""
                SELECT 1 AS found FROM space_members
                WHERE space_id = \(bind: spaceID) AND user_id = \(bind: userID) AND left_at IS NULL
                """).first() != nil
            guard member else {
                if spaceID == userID { return [] }
                throw SpaceStore.notAMember(spaceID)
            }
            let rows = try await sql.raw("""
                SELECT r.collection, r.record_id, r.fields, r.field_stamps, r.counter_deltas, r.tombstone, r.seq, r.deleted,
                       u.username AS changed_by_name
                FROM sync_records r LEFT JOIN users u ON u.id = r.changed_by
                WHERE r.space_id = \(bind: spaceID) AND r.collection = \(bind: collection)
                  AND r.record_id IN (\(binds: Array(Set(recordIDs))))
                """).all()
            let found = try rows.map { row in
                try SyncedRecord(space: spaceID, collection: collection, recordID: try row.decode(column: "record_id", as: String.self),
                                 pulled: try Self.columns(of: row), deleted: try row.decode(column: "deleted", as: Int?.self),
                                 seq: try row.decode(column: "seq", as: Int64.self),
                                 changedBy: try row.decode(column: "changed_by_name", as: String?.self))
            }
            let byID = Dictionary(found.map { ($0.recordID, $0) }) { first, _ in first }
            var seen = Set<String>()
            return recordIDs.compactMap { id in seen.insert(id).inserted ? byID[id] : nil }
        }
    }

    /// One space's records a pull from `cursor` sends, oldest change first, at most `limit`.
    private func changes(in spaceID: String, after cursor: SyncCursor, _ subscription: PullSubscription?, isPostgres: Bool,
                         limit: Int, on sql: any SQLDatabase) async throws -> [SyncedRecord] {
        let condition = Self.pulled(in: spaceID, after: cursor, subscription, isPostgres: isPostgres)
        let rows = try await sql.raw("""
            SELECT r.collection, r.record_id, r.fields, r.field_stamps, r.counter_deltas, r.tombstone, r.seq, r.deleted,
                   u.username AS changed_by_name
            FROM sync_records r LEFT JOIN users u ON u.id = r.changed_by
            WHERE \(condition)
            ORDER BY r.seq LIMIT \(literal: limit)
            """).all()
        return try rows.map { row in
            try SyncedRecord(space: spaceID, collection: try row.decode(column: "collection", as: String.self),
                             recordID: try row.decode(column: "record_id", as: String.self),
                             pulled: try Self.columns(of: row), deleted: try row.decode(column: "deleted", as: Int?.self),
                             seq: try row.decode(column: "seq", as: Int64.self),
                             changedBy: try row.decode(column: "changed_by_name", as: String?.self))
        }
    }

    /// Whether any of the spaces has a record a pull from `cursor` would send.
    private func anyChange(in spaceIDs: [String], after cursor: SyncCursor, _ subscription: PullSubscription?, isPostgres: Bool,
                           on sql: any SQLDatabase) async throws -> Bool {
        for spaceID in spaceIDs {
            let condition = Self.pulled(in: spaceID, after: cursor, subscription, isPostgres: isPostgres)
            if try await sql.raw("SELECT r.seq FROM sync_records r WHERE \(condition) LIMIT 1").first() != nil { return true }
        }
        return false
    }

    /// How many records pulls from `cursor` have still to send, over the spaces.
    private func count(in spaceIDs: [String], after cursor: SyncCursor, _ subscription: PullSubscription?, isPostgres: Bool,
                       on sql: any SQLDatabase) async throws -> Int {
        var total = 0
        for spaceID in spaceIDs {
            let condition = Self.pulled(in: spaceID, after: cursor, subscription, isPostgres: isPostgres)
            total += try await sql.raw("SELECT COUNT(*) AS remaining FROM sync_records r WHERE \(condition)").first()?
                .decode(column: "remaining", as: Int.self) ?? 0
        }
        return total
    }

    /// Each space's last seq, now.
    private func lastSeqs(of spaceIDs: [String], on sql: any SQLDatabase) async throws -> [String: Int64] {
        guard !spaceIDs.isEmpty else { return [:] }
        let rows = try await sql.select().columns("space_id", "last_seq").from("sync_counters")
            .where("space_id", .in, spaceIDs).all()
        return Dictionary(try rows.map { (try $0.decode(column: "space_id", as: String.self), try $0.decode(column: "last_seq", as: Int64.self)) },
                          uniquingKeysWith: { first, _ in first })
    }

    /// Refuses a cursor that missed a deletion the server no longer keeps: in a space it holds,
    /// deletions were purged above both its position and its first pull's head.
    private func refuseIfExpired(_ cursor: SyncCursor, spaces: [String], on sql: any SQLDatabase) async throws {
        let held = spaces.filter(cursor.holds)
        guard !held.isEmpty else { return }
        let rows = try await sql.select().columns("space_id", "purged_through").from("sync_counters")
            .where("space_id", .in, held).where("purged_through", .greaterThan, 0).all()
        for row in rows {
            let spaceID = try row.decode(column: "space_id", as: String.self)
            let purged = try row.decode(column: "purged_through", as: Int64.self)
            if purged > max(cursor.position(of: spaceID), cursor.head(of: spaceID) ?? 0) {
                throw Refusal.gone("This device last synced before the oldest deletion the server still keeps: start over from a"
                    + " first sync (changes waiting on the device are kept and sent)")
            }
        }
    }

    /// The rejection of a change to a space that does not exist (or has no counter): the same
    /// words as to a space the pusher is not in, so that a guess learns nothing.
    private static func notAMember(_ spaceID: String) -> String {
        SpaceStore.notAMember(spaceID).message
    }

    /// The records of every space `ownerID` owns.
    private func recordCount(ownedBy ownerID: String, on sql: any SQLDatabase) async throws -> Int {
        try await sql.raw("""
            SELECT COUNT(*) AS stored FROM sync_records
            WHERE space_id IN (SELECT id FROM spaces WHERE owner_id = \(bind: ownerID))
            """).first()?.decode(column: "stored", as: Int.self) ?? 0
    }

    /// Forgets applied change ids older than `cutoff` (Unix ms): a device offline longer than that
    /// is signed out anyway, so none of its changes can come back.
    func purgeAppliedChanges(before cutoff: Int64) async throws {
        try await database.withConnection { sql in
            try await sql.delete(from: "sync_applied_changes").where("applied_at", .lessThan, cutoff).run()
        }
    }

    /// Deletes the records deleted before `cutoff` (Unix ms), which stop counting against their
    /// owner's quotas, and raises each space's `purged_through` to the newest seq it removed, so
    /// that a device whose cursor is older is told to start over instead of keeping them for ever.
    /// Returns how many records went.
    ///
    /// A space at a time, in a transaction that holds its counter as a push does: a push that
    /// brings a record back (an edit stamped after its delete) gives it a new seq and `deleted` 0,
    /// so the purge, which only removes `deleted` rows at or below the seq it read, never takes it.
    @discardableResult
    func purgeDeletedRecords(before cutoff: Int64) async throws -> Int {
        try await classifyUnclassifiedRecords()
        let spaces = try await database.withConnection { sql in
            try await sql.raw("""
                SELECT space_id, MAX(seq) AS through FROM sync_records
                WHERE deleted = 1 AND updated_at < \(bind: cutoff) GROUP BY space_id ORDER BY space_id
                """).all().map { (try $0.decode(column: "space_id", as: String.self), try $0.decode(column: "through", as: Int64.self)) }
        }
        var purged = 0
        for (spaceID, through) in spaces {
            purged += try await database.transaction { sql in
                try await sql.raw("""
                    UPDATE sync_counters SET purged_through = CASE WHEN purged_through > \(bind: through) THEN purged_through
                                                                  ELSE \(bind: through) END
                    WHERE space_id = \(bind: spaceID)
                    """).run()
                let condition: SQLQueryString = """
                    space_id = \(bind: spaceID) AND deleted = 1 AND updated_at < \(bind: cutoff) AND seq <= \(bind: through)
                    """
                let rows = try await sql.raw("SELECT fields, field_stamps, counter_deltas, tombstone FROM sync_records WHERE \(condition)").all()
                let bytes = try rows.reduce(Int64(0)) { $0 + StorageUsage.bytes(of: try Self.columns(of: $1)) }
                try await sql.raw("DELETE FROM sync_records WHERE \(condition)").run()
                if let owner = try await sql.select().column("owner_id").from("spaces").where("id", .equal, spaceID).first() {
                    try await StorageUsage.add(-bytes, for: try owner.decode(column: "owner_id", as: String.self), quota: .max, on: sql)
                }
                return rows.count
            }
        }
        return purged
    }

    /// Says for each record written before migration 12 whether it is deleted (its `deleted` is
    /// NULL until then): a record whose tombstone is older than one of its edits is alive.
    private func classifyUnclassifiedRecords() async throws {
        while true {
            let done = try await database.transaction { sql in
                let rows = try await sql.raw("""
                    SELECT space_id, collection, record_id, seq, fields, field_stamps, counter_deltas, tombstone
                    FROM sync_records WHERE deleted IS NULL LIMIT 500
                    """).all()
                for row in rows {
                    let deleted = try Self.state(of: row).isDeleted
                    // NB: `seq` and `deleted IS NULL` again: a push that rewrote the row since set it itself.
                    try await sql.raw("""
                        UPDATE sync_records SET deleted = \(bind: deleted ? 1 : 0)
                        WHERE space_id = \(bind: try row.decode(column: "space_id", as: String.self))
                          AND collection = \(bind: try row.decode(column: "collection", as: String.self))
                          AND record_id = \(bind: try row.decode(column: "record_id", as: String.self))
                          AND seq = \(bind: try row.decode(column: "seq", as: Int64.self)) AND deleted IS NULL
                        """).run()
                }
                return rows.count < 500
            }
            if done { return }
        }
    }

    /// Locks the counters of `spaceIDs` (sorted) for the rest of the transaction, then reads what
    /// `userID` may do in each. The pusher's personal space is created if it is missing (an
    /// account made by an import).
    private func lockSpaces(_ spaceIDs: [String], for userID: String, now: Int64, on sql: any SQLDatabase) async throws
        -> [String: SpaceAccess]
    {
        // NB: FOR UPDATE takes PostgreSQL's row locks in the ORDER BY's order, held until COMMIT; a
        // concurrent push to the same space waits here, then reads the value the first one
        // committed. SQLite's single writer is exclusive already, and skipping it saves a statement.
        try await lockCounters(of: spaceIDs, on: sql)
        var access = try await spaceAccess(spaceIDs, for: userID, on: sql)
        if spaceIDs.contains(userID), access[userID] == nil {
            try await SpaceStore.createPersonalSpace(of: userID, now: now, on: sql)
            try await lockCounters(of: [userID], on: sql)
            access.merge(try await spaceAccess([userID], for: userID, on: sql)) { $1 }
        }
        return access
    }

    private func lockCounters(of spaceIDs: [String], on sql: any SQLDatabase) async throws {
        guard database.dialect == .postgres else { return }
        for chunk in Self.chunks(of: spaceIDs) {
            try await sql.raw("""
                SELECT space_id FROM sync_counters WHERE space_id IN (\(binds: Array(chunk))) ORDER BY space_id FOR UPDATE
                """).run()
        }
    }

    private func spaceAccess(_ spaceIDs: [String], for userID: String, on sql: any SQLDatabase) async throws -> [String: SpaceAccess] {
        var access: [String: SpaceAccess] = [:]
        for chunk in Self.chunks(of: spaceIDs) {
            let rows = try await sql.raw("""
                SELECT s.id, s.name, s.owner_id, s.kind, s.app, c.last_seq, m.role, m.left_at
                FROM spaces s JOIN sync_counters c ON c.space_id = s.id
                LEFT JOIN space_members m ON m.space_id = s.id AND m.user_id = \(bind: userID)
                WHERE s.id IN (\(binds: Array(chunk)))
                """).all()
            for row in rows {
                let id = try row.decode(column: "id", as: String.self), name = try row.decode(column: "name", as: String.self)
                let role = try row.decode(column: "role", as: String?.self).flatMap(SpaceRole.init(rawValue:))
                let refusal: String?
                if role == nil {
                    refusal = Self.notAMember(id)
                } else if try row.decode(column: "left_at", as: Int64?.self) != nil {
                    refusal = "You are no longer a member of \(name)"
                } else if role?.writes == false {
                    refusal = "You are a viewer of \(name): only its owner and editors change it"
                } else {
                    refusal = nil
                }
                let kind = try row.decode(column: "kind", as: String.self)
                guard let spaceKind = SpaceKind(rawValue: kind) else { throw StorageError.corrupt("space kind '\(kind)' is not a SpaceKind") }
                access[id] = SpaceAccess(name: name, ownerID: try row.decode(column: "owner_id", as: String.self),
                                         lastSeq: try row.decode(column: "last_seq", as: Int64.self), refusal: refusal,
                                         kind: spaceKind, app: try row.decode(column: "app", as: String?.self))
            }
        }
        return access
    }

    private func appliedChangeIDs(among ids: [String], of userID: String, on sql: any SQLDatabase) async throws -> Set<String> {
        var applied: Set<String> = []
        for chunk in Self.chunks(of: Array(Set(ids))) {
            let rows = try await sql.select().column("change_id").from("sync_applied_changes")
                .where("user_id", .equal, userID)
                .where(SQLColumn("change_id"), .in, SQLBind.group(Array(chunk)))
                .all()
            for row in rows { applied.insert(try row.decode(column: "change_id", as: String.self)) }
        }
        return applied
    }

    /// The stored state of each of `keys` that exists, with the bytes its columns take.
    private func states(of keys: [RecordKey], on sql: any SQLDatabase) async throws
        -> [RecordKey: (state: SyncRecordState, bytes: Int64)]
    {
        struct Group: Hashable {
            let space: String
            let collection: String
        }
        var states: [RecordKey: (state: SyncRecordState, bytes: Int64)] = [:]
        let groups = Dictionary(grouping: Set(keys)) { Group(space: $0.space, collection: $0.collection) }
        for (group, keys) in groups {
            for chunk in Self.chunks(of: keys.map(\.recordID)) {
                let rows = try await sql.select()
                    .columns("record_id", "fields", "field_stamps", "counter_deltas", "tombstone")
                    .from("sync_records")
                    .where("space_id", .equal, group.space).where("collection", .equal, group.collection)
                    .where(SQLColumn("record_id"), .in, SQLBind.group(Array(chunk)))
                    .all()
                for row in rows {
                    let key = RecordKey(space: group.space, collection: group.collection,
                                        recordID: try row.decode(column: "record_id", as: String.self))
                    let columns = try Self.columns(of: row)
                    states[key] = (try SyncRecordState(columns), StorageUsage.bytes(of: columns))
                }
            }
        }
        return states
    }

    /// The stored states of the records that the rules of the batch's changes may look up (those
    /// their `refersTo` fields name, pushed or stored), in every space the pusher is a member of.
    /// Nothing is read for a batch whose collections refer to none.
    private func referencedStates(
        by submissions: [SyncSubmission], in stored: [RecordKey: (state: SyncRecordState, bytes: Int64)],
        allowed access: [String: SpaceAccess], of userID: String, on sql: any SQLDatabase
    ) async throws -> [RecordKey: SyncRecordState] {
        var wanted: [String: Set<String>] = [:]
        for submission in submissions {
            guard case .success(let change) = submission.change, access[submission.space]?.refusal == nil,
                  let rules = collections[change.collection]?.rules
            else { continue }
            let storedFields = stored[RecordKey(space: submission.space, collection: change.collection, recordID: change.recordID)]?.state.fields
            for case .refersTo(let field, let target, _) in rules {
                for id in [change.fields[field]?.stringValue, storedFields?[field]?.stringValue].compactMap({ $0 }) {
                    wanted[target, default: []].insert(id)
                }
            }
        }
        var states: [RecordKey: SyncRecordState] = [:]
        for (collection, ids) in wanted.sorted(by: { $0.key < $1.key }) {
            for chunk in Self.chunks(of: ids.sorted()) {
                let rows = try await sql.raw("""
                    SELECT space_id, record_id, fields, field_stamps, counter_deltas, tombstone FROM sync_records
                    WHERE collection = \(bind: collection) AND record_id IN (\(binds: Array(chunk)))
                      AND space_id IN (SELECT space_id FROM space_members WHERE user_id = \(bind: userID) AND left_at IS NULL)
                    """).all()
                for row in rows {
                    let key = RecordKey(space: try row.decode(column: "space_id", as: String.self), collection: collection,
                                        recordID: try row.decode(column: "record_id", as: String.self))
                    states[key] = try Self.state(of: row)
                }
            }
        }
        return states
    }

    /// The records of `keys` as a pull returns them, those that exist.
    private func syncedRecords(_ keys: [RecordKey], on sql: any SQLDatabase) async throws -> [RecordKey: SyncedRecord] {
        var records: [RecordKey: SyncedRecord] = [:]
        for key in Set(keys) {
            let row = try await sql.raw("""
                SELECT r.fields, r.field_stamps, r.counter_deltas, r.tombstone, r.seq, u.username AS changed_by_name
                FROM sync_records r LEFT JOIN users u ON u.id = r.changed_by
                WHERE r.space_id = \(bind: key.space) AND r.collection = \(bind: key.collection) AND r.record_id = \(bind: key.recordID)
                """).first()
            guard let row else { continue }
            records[key] = SyncedRecord(space: key.space, collection: key.collection, recordID: key.recordID, state: try Self.state(of: row),
                                        seq: try row.decode(column: "seq", as: Int64.self),
                                        changedBy: try row.decode(column: "changed_by_name", as: String?.self))
        }
        return records
    }

    private func recordApplied(_ ids: [String], userID: String, now: Int64, on sql: any SQLDatabase) async throws {
        for chunk in Self.chunks(of: ids) {
            let insert = sql.insert(into: "sync_applied_changes").columns("user_id", "change_id", "applied_at")
            for id in chunk { insert.values(SQLBind(userID), SQLBind(id), SQLBind(now)) }
            try await insert.run()
        }
    }

    /// Writes the merged records; `authors` names who made the newest applied change of each (a
    /// record not in it keeps the author it has).
    private func save(
        _ rows: [(key: RecordKey, columns: SyncRecordState.Columns, seq: Int64, deleted: Bool)], authors: [RecordKey: String], now: Int64,
        on sql: any SQLDatabase
    ) async throws {
        for chunk in Self.chunks(of: rows) {
            let upsert = sql.insert(into: "sync_records")
                .columns("space_id", "collection", "record_id", "fields", "field_stamps", "counter_deltas", "tombstone", "seq",
                         "updated_at", "changed_by", "deleted")
            for row in chunk {
                let columns = row.columns
                upsert.values(SQLBind(row.key.space), SQLBind(row.key.collection), SQLBind(row.key.recordID),
                              SQLBind(columns.fields), SQLBind(columns.fieldStamps), SQLBind(columns.counterDeltas),
                              SQLBind(columns.tombstone),
                              SQLBind(row.seq), SQLBind(now), SQLBind(authors[row.key]), SQLBind(row.deleted ? 1 : 0))
            }
            try await upsert.onConflict(with: ["space_id", "collection", "record_id"]) { update in
                update.set(excludedValueOf: "fields").set(excludedValueOf: "field_stamps").set(excludedValueOf: "counter_deltas")
                    .set(excludedValueOf: "tombstone").set(excludedValueOf: "seq").set(excludedValueOf: "updated_at")
                    .set("changed_by", to: SQLFunction("COALESCE", args: SQLExcludedColumn("changed_by"), SQLColumn("changed_by", table: "sync_records")))
                    .set(excludedValueOf: "deleted")
            }.run()
        }
    }

    private static func state(of row: any SQLRow) throws -> SyncRecordState {
        try SyncRecordState(columns(of: row))
    }

    private static func columns(of row: any SQLRow) throws -> SyncRecordState.Columns {
        .init(
            fields: try row.decode(column: "fields", as: String.self),
            fieldStamps: try row.decode(column: "field_stamps", as: String.self),
            counterDeltas: try row.decode(column: "counter_deltas", as: String?.self),
            tombstone: try row.decode(column: "tombstone", as: String?.self)
        )
    }

    private static func chunks<Element>(of elements: [Element]) -> [ArraySlice<Element>] {
        stride(from: 0, to: elements.count, by: rowsPerStatement).map {
            elements[$0..<min($0 + rowsPerStatement, elements.count)]
        }
    }
}
