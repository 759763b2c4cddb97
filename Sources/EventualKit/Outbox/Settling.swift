import EventualAPI
import Foundation
import GRDB

extension SyncEngine {
    /// The changes the server refused, oldest first, with what it said.
    public nonisolated func failures() throws -> [FailedChange] {
        try store.reader.read { db in try FailedChange.all(db) }
    }

    /// Settles a refused change as the person chose, in one local transaction (`id`: the entry's
    /// id or its last 8 characters):
    /// - take theirs: the row takes the server's record (removed when the server has none) and
    ///   the change is dropped; refused when the server did not say what it holds;
    /// - keep mine: the change is stamped again with `edits` over it, written to the row, and
    ///   queued at the end of the outbox under a new id;
    /// - discard: the change is dropped and the row goes back to the server's record when known,
    ///   or goes when the change made it here (the server never had it);
    /// - keep as own: the record goes to the person's own space under a new id (see `keepAsOwn`),
    ///   and the change is dropped as by discard.
    /// In a space the person is no longer in, keep mine is refused (`SettleError.notInSpace`): it
    /// would be refused again, for good; the row there goes.
    /// Other changes of the record that wait keep showing on the row.
    @discardableResult
    public func settle(_ id: String, _ choice: SettleChoice) async throws -> Settlement {
        let entry = try Outbox(store: store).failedEntry(id)
        guard entry.kind == .change else { throw SettleError.notAChange(entry.shortID) }
        guard let change = try await store.reader.read({ db in try FailedChange.one(entry.id, db) }) else { throw OutboxError.notFailed(id) }
        guard let mirror = collections[change.collection] else { throw SettleError.unknownCollection(change.collection) }
        if choice == .takeTheirs, !change.knowsServerState { throw SettleError.serverStateUnknown(change.shortID) }
        // NB: a space the person left or was removed from refuses every change, and holds nothing they may read.
        let stillIn = try await store.reader.read { db in try change.space.map { try SpaceTable.space($0, db) != nil } ?? true }
        if case .keepMine = choice, !stillIn { throw SettleError.notInSpace(change.shortID, reason: change.reason) }
        if case .keepAsOwn = choice, change.space == nil || change.deleted { throw SettleError.ownAlready(change.shortID) }
        let settlement = try await store.write { tx in
            guard try OutboxTable.discardFailed(id: change.id, db: tx.db) else { throw OutboxError.notFailed(id) }
            switch choice {
            case .keepMine(let asked):
                let (edits, makesAgain) = try Self.keptEdits(of: change, asked, mirror: mirror, tx.db)
                // NB: an edited counter is set: added to as well, the row and the server would differ.
                // NB: a kept creation still makes the record: refused again, discarding it removes the row.
                let queued = try tx.recordChange(mirror.collection, id: change.recordID, fields: change.fields.merging(edits) { $1 },
                                                 adding: change.deltas.filter { edits[$0.key] == nil }, deleted: change.deleted,
                                                 space: change.space, createsRecord: change.createsRecord || makesAgain)
                if !edits.isEmpty, !change.deleted {
                    try mirror.apply(RemoteRecord(collection: change.collection, recordID: change.recordID, fields: edits, deleted: false,
                                                  hlc: "", space: change.space), pending: PendingEdits(), in: tx.db)
                }
                return Settlement(change: change, choice: choice, queued: queued, restored: false)
            case .keepAsOwn(let edits):
                guard let table = mirror as? TableMirror else { throw SettleError.unknownCollection(change.collection) }
                let kept = try Self.keepAsOwn(change, edits: edits, mirror: table, fromSpaceStillIn: stillIn, in: tx)
                var settlement = try Self.restore(change, choice: choice, mirror: mirror, refetching: stillIn, in: tx)
                settlement.keptAs = kept
                return settlement
            case .takeTheirs, .discard:
                return try Self.restore(change, choice: choice, mirror: mirror, refetching: stillIn, in: tx)
            }
        }
        refreshStatus()
        return settlement
    }

    /// What keeping a refused change sends over it besides what the person `asked`, and whether it
    /// makes the record again: a change of a record set aside meanwhile (`SyncRule.editableWhile`:
    /// a pantry item thrown away) brings it back, its field set to the first open value; an edit of
    /// a record deleted for good (`SyncCollection.deletionIsFinal`: a SpendiQ transaction) makes it
    /// again, whole, as this device shows it (a counter at its shown value), since the server takes
    /// no edit of it.
    private static func keptEdits(of change: FailedChange, _ asked: [String: SyncValue], mirror: any SyncedCollectionStore,
                                  _ db: Database) throws -> (edits: [String: SyncValue], makesAgain: Bool) {
        let collection = mirror.collection
        var edits = asked
        if change.code == SyncRuleViolation.setAside, !change.deleted {
            for case .editableWhile(let field, let open) in collection.rules where field == change.field && edits[field] == nil {
                if let first = open.first { edits[field] = .string(first) }
            }
        }
        guard change.code == SyncRuleViolation.deleted, collection.deletionIsFinal, !change.deleted, !change.createsRecord else {
            return (edits, false)
        }
        let shown = try (mirror as? TableMirror)?.fieldsOfRow(change.recordID, db) ?? change.serverRecord?.fields ?? [:]
        var whole = shown.filter { collection.fields[$0.key] != nil }.merging(change.fields) { $1 }
        for (field, delta) in change.deltas where shown[field] == nil {
            whole[field] = .number((change.serverRecord?.fields[field]?.doubleValue ?? 0) + delta)
        }
        return (whole.merging(edits) { $1 }, true)
    }

    /// The record of a refused change in the person's own space under a new id: the row as this
    /// device holds it (else the server's record), with the change and `edits` over it, a counter's
    /// additions made a value; its photos uploaded to the person's own space. Returns the new id.
    private static func keepAsOwn(_ change: FailedChange, edits: [String: SyncValue], mirror: TableMirror, fromSpaceStillIn: Bool,
                                  in tx: LocalTransaction) throws -> String {
        let base = try mirror.fieldsOfRow(change.recordID, tx.db) ?? change.serverRecord?.fields ?? [:]
        var fields = base.merging(change.fields) { $1 }
        for (field, delta) in change.deltas { fields[field] = .number((base[field]?.doubleValue ?? 0) + delta) }
        fields.merge(edits) { $1 }
        // NB: a use of more than what was left when the person lost sight of it keeps what the rules allow: none left, not less.
        for case .notBelow(let field, let minimum) in mirror.collection.rules {
            if let value = fields[field]?.doubleValue, value < minimum { fields[field] = .number(minimum) }
        }
        for (field, value) in fields {
            guard case .string(let text) = value, let reference = AttachmentReference(parsing: text) else { continue }
            // NB: a photo this device no longer holds, of a space the person left, can be had from nowhere: the record goes without it.
            let held = try Bool.fetchOne(tx.db, sql: "SELECT EXISTS (SELECT 1 FROM eventual_attachments WHERE sha256 = ?)",
                                         arguments: [reference.sha256]) ?? false
            if held || fromSpaceStillIn {
                try tx.queueUpload(existing: reference, space: nil, from: change.space)
            } else {
                fields[field] = .null
            }
        }
        let id = UUIDv7.make()
        try mirror.insert(id, fields, space: nil, in: tx)
        return id
    }

    /// Drops a refused change's effect on its row: back to the server's record (see `settle`);
    /// `refetching` asks the server for its newest record (not of a space the person is no longer in).
    private static func restore(_ change: FailedChange, choice: SettleChoice, mirror: any SyncedCollectionStore, refetching: Bool,
                                in tx: LocalTransaction) throws -> Settlement {
        // NB: the server's record may be newer than what the refusal said, or unknown, and no pull
        // sends it again: it is asked for once the network allows, so that every device ends equal.
        if refetching, !change.createsRecord || change.serverRecord != nil {
            try RecordRefetch.queue(collection: change.collection, recordID: change.recordID, space: change.space, in: tx)
        }
        // NB: out of the space, the row is gone for good: nothing of it may be read there again.
        guard change.knowsServerState || change.createsRecord || !refetching else {
            // NB: what the server holds is unknown: the row keeps the change until the refetch answers.
            return Settlement(change: change, choice: choice, queued: nil, restored: false)
        }
        let pending = try OutboxTable.unacknowledgedEdits(collection: change.collection, recordIDs: [change.recordID],
                                                          db: tx.db)[change.recordID] ?? PendingEdits()
        let gone = RemoteRecord(collection: change.collection, recordID: change.recordID, fields: [:], deleted: true, hlc: "", space: change.space)
        let record = refetching ? change.serverRecord?.whole(of: mirror.collection) ?? gone : gone
        if !pending.deletes {
            try mirror.apply(record, pending: pending, in: tx.db)
            try KeptFields.keep(record, declared: mirror.collection, anyKept: true, tx.db)
        }
        return Settlement(change: change, choice: choice, queued: nil, restored: true)
    }
}
