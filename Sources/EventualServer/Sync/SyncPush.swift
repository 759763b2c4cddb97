import EventualAPI
import EventualStorage
import SQLKit

extension SyncStore {
    /// Applies a batch in one transaction and answers each change, in order. A change that would
    /// take its space's owner past `quota` records or past `byteQuota` stored bytes is refused
    /// alone (`PushQuotas`), the rest of the batch applied.
    func push(_ submissions: [SyncSubmission], userID: String, now: Int64, quota: Int = .max,
              byteQuota: Int64 = .max) async throws -> [SyncOutcome] {
        try await pushed(submissions, userID: userID, now: now, quota: quota, byteQuota: byteQuota, by: nil).outcomes
    }

    /// As `push`, and the spaces the batch moved, for the live channel: each with its newest
    /// position, the collections changed and its members as the push committed (read under the
    /// spaces' locks, so that someone removed before the commit is not among them).
    /// `by` names the pushing token (`AccessToken.fingerprint`).
    func pushed(_ submissions: [SyncSubmission], userID: String, now: Int64, quota: Int = .max,
                byteQuota: Int64 = .max, by: String?) async throws -> (outcomes: [SyncOutcome], moves: [LiveMove]) {
        let collections = self.collections
        return try await database.transaction { sql in
            var merge = try await PushMerge(submissions, userID: userID, now: now, collections: collections, quota: quota,
                                            byteQuota: byteQuota, on: sql)
            for submission in submissions { try await merge.take(submission, on: sql) }
            let outcomes = try await merge.commit(on: sql)
            return (outcomes, try await merge.moves(by: by, on: sql))
        }
    }
}

/// One batch merged into the records it changes, in its push's transaction: made under the
/// counter locks of its spaces, change by change in the batch's order, each change checked
/// against its collection's rules and its owner's quotas as it comes, then written at once.
struct PushMerge {
    private let userID: String
    private let now: Int64
    private let collections: [String: SyncCollection]
    /// What the pusher may do in each space of the batch, read under the spaces' locks.
    private var access: [String: SpaceAccess]
    private var appliedIDs: Set<String>
    /// The records the batch changes as stored before it, with the bytes they take.
    private let stored: [SyncRecordKey: (state: SyncRecordState, bytes: Int64)]
    /// The records the batch changes, as merged so far.
    private var records: [SyncRecordKey: SyncRecordState]
    /// The columns of each record the batch changed, as merged so far, and the bytes they take.
    private var written: [SyncRecordKey: (columns: SyncRecordState.Columns, bytes: Int64)] = [:]
    /// What the owners of the batch's spaces may still store.
    private var quotas: PushQuotas
    /// The records its rules may look up that it does not change (see `referencedStates`).
    private let referenced: [SyncRecordKey: SyncRecordState]
    /// Where a rule's lookup may find a record: the spaces the batch writes, and those its references were read in.
    private let searched: [String]

    private var outcomes: [SyncOutcome] = []
    private var refusals: [(index: Int, key: SyncRecordKey, violation: SyncRuleViolation)] = []
    private var newlyApplied: [String] = []
    /// The records changed, in the order first changed: the order they take seq values in.
    private var changed: [SyncRecordKey] = []
    private var changedSet = Set<SyncRecordKey>()
    /// Who made the newest applied change of each record (see `take`).
    private var authors: [SyncRecordKey: String] = [:]
    /// The newest seq of each space the commit wrote to.
    private var positions: [String: Int64] = [:]

    /// Locks the batch's spaces, then their owners' counts (`PushQuotas`), and reads what its merge needs.
    init(_ submissions: [SyncSubmission], userID: String, now: Int64, collections: [String: SyncCollection],
         quota: Int, byteQuota: Int64, on sql: any SQLDatabase) async throws {
        self.userID = userID
        self.now = now
        self.collections = collections
        let access = try await SpaceGate.enter(Set(submissions.map(\.space)).sorted(), as: userID, now: now, on: sql)
        self.access = access
        quotas = try await PushQuotas(records: quota, bytes: byteQuota, userID: userID,
                                      owners: Set(access.values.filter { $0.refusalToWrite == nil }.map(\.ownerID)), on: sql)
        appliedIDs = try await SyncRecordRows.appliedChangeIDs(among: submissions.map(\.id), of: userID, on: sql)
        let keys = submissions.compactMap { submission -> SyncRecordKey? in
            guard case .success(let change) = submission.change, access[submission.space]?.refusalToWrite == nil else { return nil }
            return SyncRecordKey(space: submission.space, collection: change.collection, recordID: change.recordID)
        }
        stored = try await SyncRecordRows.states(of: keys, on: sql)
        records = stored.mapValues(\.state)
        referenced = try await SyncRecordRows.states(of: Self.referencedIDs(by: submissions, in: stored, access: access, collections),
                                                     visibleTo: userID, on: sql)
        searched = Set(access.filter { $0.value.refusalToWrite == nil }.keys).union(referenced.keys.map(\.space)).sorted()
    }

    /// Merges one change, or answers why not.
    mutating func take(_ submission: SyncSubmission, on sql: any SQLDatabase) async throws {
        guard !appliedIDs.contains(submission.id) else { return outcomes.append(.duplicate) }
        let change: ValidatedChange
        switch submission.change {
        case .failure(let rejection): return outcomes.append(.rejected(rejection.message))
        case .success(let validated): change = validated
        }
        if let rejection = try await admit(change, to: submission.space, on: sql) { return outcomes.append(.rejected(rejection)) }
        let key = SyncRecordKey(space: submission.space, collection: change.collection, recordID: change.recordID)
        let before = records[key]
        var state = before ?? SyncRecordState()
        let newestBefore = state.newestStamp
        // NB: the author of a record is whoever made its newest applied change: a change that
        // lost every comparison, or won only older ground, leaves the author shown as it was.
        let counters = Set((collections[change.collection]?.fields ?? [:]).filter { $0.value.type == .counter }.map(\.key))
        var merged = change.restores ? state.restore(change, counters: counters) : state.apply(change)
        if collections[change.collection]?.deletionIsFinal == true, !change.restores { merged = state.makeFinal(change) || merged }
        let authored = merged && newestBefore.map { (change.restoredState?.newestStamp ?? change.stamp) > $0 } ?? true
        if let violation = violation(of: change, merged: state, before: before, in: submission.space) {
            refusals.append((outcomes.count, key, violation))
            return outcomes.append(.rejected(violation.message))
        }
        // NB: a new record, a tombstone included, is a row more for the owner; so is the first
        // change of a record that an earlier change of this batch was refused for.
        let columns = try state.columns()
        let bytes = StorageUsage.bytes(of: columns)
        let grown = bytes - (written[key]?.bytes ?? stored[key]?.bytes ?? 0)
        // NB: the record quota counts live records: one made (or made again after its deletion) takes a place, a deletion frees one.
        let wasLive = before.map { !$0.isDeleted } ?? false
        if let refusal = try await quotas.take(creates: !wasLive && !state.isDeleted, deletes: wasLive && state.isDeleted, grown: grown,
                                               in: access[submission.space]!, on: sql) {
            refusals.append((outcomes.count, key, refusal))
            return outcomes.append(.rejected(refusal.message))
        }
        written[key] = (columns, bytes)
        // NB: a change that lost every comparison still moves its record to a new seq.
        // Its device skipped the winning values in an earlier pull (its own edit was
        // pending then, and pending edits are never overwritten); this brings them back.
        if changedSet.insert(key).inserted { changed.append(key) }
        if authored { authors[key] = userID }
        records[key] = state
        appliedIDs.insert(submission.id)
        newlyApplied.append(submission.id)
        outcomes.append(.applied)
    }

    /// Why the pusher may not write `change` to the space, nil when they may. A shared space holds
    /// one app's records: the first one filed claims a space no app has yet.
    private mutating func admit(_ change: ValidatedChange, to spaceID: String, on sql: any SQLDatabase) async throws -> String? {
        guard let space = access[spaceID] else { return SpaceGate.notAMember(spaceID).message }
        if let refusal = space.refusalToWrite { return refusal }
        guard space.kind == .shared, let app = collections[change.collection]?.app.rawValue else { return nil }
        if let claimed = space.app, claimed != app {
            return "\(space.name) is shared in another app: it holds no \(change.collection) records"
        }
        if space.app == nil {
            try await sql.raw("UPDATE spaces SET app = \(bind: app) WHERE id = \(bind: spaceID) AND app IS NULL").run()
            access[spaceID]?.app = app
        }
        return nil
    }

    /// The rule the merged record would break, if any.
    private func violation(of change: ValidatedChange, merged state: SyncRecordState, before: SyncRecordState?,
                           in spaceID: String) -> SyncRuleViolation? {
        // NB: a change made before a deletion it reaches after changes nothing: its author is told, not left to think it applied.
        // A record sent back after a restore that a newer deletion beat stays deleted, unrefused: it is no person's edit.
        let final = collections[change.collection]?.deletionIsFinal == true
        if before?.isDeleted == true, state.isDeleted || (final && !change.creates), !change.deleted, !change.restores {
            return SyncRuleViolation(code: SyncRuleViolation.deleted, field: "",
                                     message: "It was deleted on another device or by another member before this change reached the server")
        }
        guard let collection = collections[change.collection], !state.isDeleted else { return nil }
        return collection.violation(merged: state.fields, previous: before.flatMap { $0.isDeleted ? nil : $0.fields },
                                    restoring: change.restores, lookup: { visible($0, $1, from: spaceID) })
    }

    /// The fields of a live record the pusher can see: in `space` first, else in another of their spaces.
    private func visible(_ collection: String, _ recordID: String, from space: String) -> [String: SyncValue]? {
        for candidate in [space] + searched.filter({ $0 != space }) {
            let key = SyncRecordKey(space: candidate, collection: collection, recordID: recordID)
            if let state = records[key] ?? referenced[key], !state.isDeleted { return state.fields }
        }
        return nil
    }

    /// Writes the merged records, each with the next seq of its space, and answers each change.
    mutating func commit(on sql: any SQLDatabase) async throws -> [SyncOutcome] {
        try await SyncRecordRows.recordApplied(newlyApplied, userID: userID, now: now, on: sql)
        var nextSeq = access.mapValues(\.lastSeq)
        let rows = changed.map { key in
            nextSeq[key.space]! += 1
            return SyncRecordRows.Row(key: key, columns: written[key]!.columns, seq: nextSeq[key.space]!,
                                      deleted: records[key]!.isDeleted)
        }
        // NB: set here, not in a `defer`: Swift 6.3's optimizer crashed (signal 11, splitting this
        // coroutine) on a `defer` that writes `self` in a mutating async method. A push that throws
        // after this point is rolled back and signals nothing, whatever `positions` holds.
        let moved = nextSeq.filter { $0.value != access[$0.key]!.lastSeq }
        positions = moved
        // A space's records count against its owner. NB: the byte quota let each change through
        // or refused it as it came (`take`), on counts locked for this push: the commit only adds
        // what it let through, and never refuses the push whole.
        var grown: [String: Int64] = [:]
        for row in rows {
            grown[access[row.key.space]!.ownerID, default: 0] += written[row.key]!.bytes - (stored[row.key]?.bytes ?? 0)
        }
        for (ownerID, bytes) in grown.sorted(by: { $0.key < $1.key }) {
            try await StorageUsage.add(bytes, for: ownerID, quota: .max, on: sql)
        }
        try await SyncRecordRows.save(rows, authors: authors, now: now, on: sql)
        for (space, seq) in moved.sorted(by: { $0.key < $1.key }) {
            try await SpaceGate.advance(space, to: seq, on: sql)
        }
        var outcomes = self.outcomes
        if !refusals.isEmpty {
            // NB: read after the save, so that `current` is what a pull would now return.
            let current = try await SyncRecordRows.syncedRecords(refusals.map(\.key), on: sql)
            for refusal in refusals { outcomes[refusal.index] = .refused(refusal.violation, current: current[refusal.key]) }
        }
        return outcomes
    }

    /// The spaces `commit` moved (see `SyncStore.pushed`).
    func moves(by: String?, on sql: any SQLDatabase) async throws -> [LiveMove] {
        guard !positions.isEmpty else { return [] }
        var collections: [String: Set<String>] = [:]
        for key in changed where positions[key.space] != nil { collections[key.space, default: []].insert(key.collection) }
        let members = try await SpaceGate.members(of: positions.keys.sorted(), on: sql)
        return positions.keys.sorted().map { space in
            LiveMove(space: space, position: positions[space]!, collections: (collections[space] ?? []).sorted(),
                     members: members[space] ?? [], by: by)
        }
    }

    /// The records that the rules of the batch's changes may look up, by collection: those their
    /// `refersTo` fields name, pushed or stored. None for a batch whose collections refer to none.
    private static func referencedIDs(by submissions: [SyncSubmission], in stored: [SyncRecordKey: (state: SyncRecordState, bytes: Int64)],
                                      access: [String: SpaceAccess], _ collections: [String: SyncCollection]) -> [String: Set<String>] {
        var wanted: [String: Set<String>] = [:]
        for submission in submissions {
            guard case .success(let change) = submission.change, access[submission.space]?.refusalToWrite == nil,
                  let rules = collections[change.collection]?.rules
            else { continue }
            let key = SyncRecordKey(space: submission.space, collection: change.collection, recordID: change.recordID)
            let storedFields = stored[key]?.state.fields
            for case .refersTo(let field, let target, _) in rules {
                for id in [change.fields[field]?.stringValue, storedFields?[field]?.stringValue].compactMap({ $0 }) {
                    wanted[target, default: []].insert(id)
                }
            }
        }
        return wanted
    }
}
