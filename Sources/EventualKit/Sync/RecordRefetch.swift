import EventualAPI
import Foundation
import GRDB

/// Asks the server for a record as it stands, and takes it in: queued when the device dropped a
/// change of its own (settled by discarding it or taking the server's version) and so may hold
/// an older version than the server's, which no pull sends again (its cursor has moved past it).
/// Queued through the outbox, it works offline and runs once the network is back.
enum RecordRefetch {
    static let operation = "sync.refetch"

    struct Payload: Codable, Sendable {
        let collection: String
        let recordId: String
        /// Nil for the person's own space.
        let space: String?
    }

    /// Queues the refetch of a record in the caller's transaction (one per record: a newer one replaces a waiting one).
    static func queue(collection: String, recordID: String, space: String?, in tx: LocalTransaction) throws {
        try tx.enqueueCall(operation, payload: Payload(collection: collection, recordId: recordID, space: space),
                           coalescingKey: "\(operation):\(collection):\(space ?? ""):\(recordID)", space: space)
    }

    /// What `status` says of one waiting.
    static func summary(of entry: OutboxEntry) -> String? {
        guard entry.kind == .call, entry.operation == operation,
              let payload = try? JSONDecoder().decode(Payload.self, from: entry.payload) else { return nil }
        return "fetching the server's version of \(payload.collection) \(payload.recordId.suffix(8))"
    }

    /// The handler, over the engine's mirrors and link.
    static func handler(collections: [String: any SyncedCollectionStore], link: ServerLink) -> CallHandler {
        { context in
            let call = try context.decode(Payload.self)
            guard let mirror = collections[call.collection] else { return }
            var query = URLComponents()
            query.queryItems = [URLQueryItem(name: "collection", value: call.collection), URLQueryItem(name: "id", value: call.recordId)]
                + (call.space.map { [URLQueryItem(name: "space", value: $0)] } ?? [])
            let (response, body) = try await link.send(.get, "/v1/sync/records?" + (query.percentEncodedQuery ?? ""), json: nil,
                                                       operationID: "syncRecords")
            let records: [SyncWire.PulledRecord]
            switch response.status.code {
            case 200: records = try JSONDecoder().decode(SyncWire.RecordList.self, from: body).records
            // NB: no longer a member: the device holds no record of the space, this one included
            // (a change kept after the pull that removed the space wrote its row back).
            case 404: records = []
            default: throw RemoteFailure.answer(response.status.code, body)
            }
            try await context.store.writer.write { db in
                let pending = try OutboxTable.unacknowledgedEdits(collection: call.collection, recordIDs: [call.recordId],
                                                                  db: db)[call.recordId] ?? PendingEdits()
                // NB: a delete waiting to be sent is the truth until the server hears it.
                guard !pending.deletes else { return }
                let record = records.first.map { $0.remote(personalSpace: nil) }.map {
                    RemoteRecord(collection: $0.collection, recordID: $0.recordID, fields: $0.fields, deleted: $0.deleted, hlc: $0.hlc,
                                 space: call.space, changedBy: $0.changedBy)
                }
                // NB: a record the server never had goes, unless a change of it waits (it makes it).
                let gone = RemoteRecord(collection: call.collection, recordID: call.recordId, fields: [:], deleted: true, hlc: "",
                                        space: call.space)
                if let record {
                    try mirror.apply(record.whole(of: mirror.collection), pending: pending, in: db)
                    try KeptFields.keep(record, declared: mirror.collection, anyKept: true, db)
                } else if pending == PendingEdits() {
                    try mirror.apply(gone, pending: pending, in: db)
                    try KeptFields.keep(gone, declared: mirror.collection, anyKept: true, db)
                }
            }
        }
    }
}
