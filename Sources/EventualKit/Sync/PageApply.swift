import EventualAPI
import Foundation
import GRDB
import Logging

/// Writes a pulled page in one transaction, so a crash never skips nor half-applies one: the spaces
/// the person is in; the rows of those they left or were removed from, deleted, and their
/// changes to them still waiting, failed; the pulled records; the subscription's cursor that
/// follows them and its progress;
/// after the last page, the time of this sync (a live query's snapshot of the page has it).
struct PageApply: Sendable {
    private let store: LocalStore
    private let collections: [String: any SyncedCollectionStore]
    private let logger: Logger

    init(store: LocalStore, collections: [String: any SyncedCollectionStore], logger: Logger) {
        self.store = store
        self.collections = collections
        self.logger = logger
    }

    /// Writes `records` of `page` and `subscription`'s row. Returns clock warnings, how many
    /// records were this device's own changes coming back, the changes failed, and the
    /// attachments downloaded from the spaces left (their files go after the commit).
    nonisolated(nonsending) func write(_ records: [RemoteRecord], of page: SyncWire.PulledPage, subscription: SubscriptionRow,
                                       isLast: Bool) async throws
        -> (problems: [String], echoes: Int, failed: [(id: String, message: String)], forgotten: [String]) {
        let collections = self.collections
        let clock = store.clock
        let logger = self.logger
        return try await store.writer.write { db in
            var problems: [String] = []
            var echoes = 0
            var failed: [(id: String, message: String)] = []
            var forgotten: [String] = []
            if let spaces = page.spaces { try SpaceTable.replace(with: spaces, db: db) }
            for space in page.removed ?? [] {
                // NB: the rows with changes waiting, as last seen: their refusals name them, and one kept as the person's own has them whole.
                let lastSeen = try Self.rowsWithWaitingChanges(in: space.id, collections, db)
                for mirror in collections.values { try mirror.deleteRecords(inSpace: space.id, in: db) }
                forgotten += try AttachmentTable.forgetDownloads(from: space.id, db)
                try KeptFields.forget(space: space.id, db)
                let message = "You are no longer a member of \(space.name)"
                failed += try OutboxTable.failChanges(in: space.id, message: message, db: db).map { ($0, message) }
                for record in lastSeen { try FailedChange.keep(record, db) }
                try ServerHistory.forget(space: space.id, stamps: true, db)
            }
            try ServerHistory.remember(page.heads ?? [], db)
            var pendingByCollection: [String: [String: PendingEdits]] = [:]
            for (collection, records) in Dictionary(grouping: records, by: \.collection) where collections[collection] != nil {
                pendingByCollection[collection] = try OutboxTable.unacknowledgedEdits(
                    collection: collection, recordIDs: records.map(\.recordID), db: db)
            }
            let anyKept = try !KeptFields.isEmpty(db)
            let fillsFields = !subscription.filledFields.isEmpty
            for record in records {
                if let stamp = HLCStamp(parsing: record.hlc) {
                    do { try clock.receive(stamp) } catch { problems.append("\(error)") }
                    if stamp.node == clock.node { echoes += 1 }
                }
                guard let mirror = collections[record.collection] else {
                    // NB: a collection a later version of the app declares: kept whole for it.
                    try KeptFields.keep(record, declared: nil, anyKept: anyKept, db)
                    continue
                }
                guard !fillsFields else {
                    try Self.backFill(record, into: mirror, pending: pendingByCollection[record.collection]?[record.recordID], db)
                    continue
                }
                try ServerHistory.note([record], db)
                let pending = pendingByCollection[record.collection]?[record.recordID] ?? PendingEdits()
                if pending != PendingEdits() { try FailedChange.keep(record, db) }
                // NB: a delete waiting to be sent is the truth until the server hears it.
                guard !pending.deletes else { continue }
                try mirror.apply(record, pending: pending, in: db)
                // NB: the fields a later version of the app declares, in the transaction that moves the cursor past them.
                try KeptFields.keep(record, declared: mirror.collection, anyKept: anyKept, db)
            }
            try SubscriptionTable.save(subscription, db: db)
            if isLast { try EngineSchema.setValue(String(clock.now()), for: .lastSyncAt, db) }
            return (problems, echoes, failed, forgotten)
        }
    }

    /// Puts a back filled record's values (only the fields a new version added) into its row, as
    /// kept values are folded: a field a waiting change sets stays the device's, and a record the
    /// device does not hold (deleted here, or not pulled yet: its pull brings it whole) is left.
    /// NB: neither noted in the server's history nor kept: the page holds part of the record.
    private static func backFill(_ record: RemoteRecord, into mirror: any SyncedCollectionStore, pending: PendingEdits?,
                                 _ db: Database) throws {
        guard !record.deleted, let mirror = mirror as? TableMirror, !(pending?.deletes ?? false),
              try mirror.fieldsOfRow(record.recordID, db) != nil else { return }
        try mirror.fold(record, pending: pending ?? PendingEdits(), in: db)
    }

    /// The rows of `space` that changes waiting to be sent (or refused already) are about, as deleted records holding
    /// their last fields: to the person, gone from a space they are no longer in.
    private static func rowsWithWaitingChanges(in space: String, _ collections: [String: any SyncedCollectionStore],
                                               _ db: Database) throws -> [RemoteRecord] {
        let waiting = try Row.fetchAll(db, sql: """
            SELECT DISTINCT operation, record_id FROM eventual_outbox WHERE kind = 'change' AND space = ? AND state IN ('pending', 'failed')
            """, arguments: [space])
        return try waiting.compactMap { row in
            guard let mirror = collections[row["operation"]] as? TableMirror, let id = row["record_id"] as String?,
                  let fields = try mirror.fieldsOfRow(id, db) else { return nil }
            return RemoteRecord(collection: mirror.collection.name, recordID: id, fields: fields, deleted: true, hlc: "", space: space)
        }
    }
}
