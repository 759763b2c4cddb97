import EventualAPI
import Foundation
import GRDB

/// A change the server refused, with what it said: for the person to settle
/// (`SignedInDevice.settle`).
public struct FailedChange: Sendable, Equatable, Identifiable {
    /// The outbox entry's id.
    public let id: String
    public let collection: String
    public let recordID: String
    /// The space of the change; nil for the person's own.
    public let space: String?
    /// What the change set, added to counters, or whether it deleted the record.
    public let fields: [String: SyncValue]
    public let deltas: [String: Double]
    public let deleted: Bool
    /// The server's words.
    public let reason: String
    /// A rule's refusal: its code (`below_minimum`, `not_allowed`, `missing_reference`,
    /// `mismatched_reference`) and the field it is about; nil for other refusals.
    public let code: String?
    public let field: String?
    /// The record as the server held it when it refused, sent with a rule's refusal; nil when it
    /// holds none, or did not say.
    public let serverRecord: RemoteRecord?
    /// Unix milliseconds when the change was made.
    public let createdAt: Int64
    /// How many times it was sent.
    public let attempts: Int
    /// The change made the record on this device (its id was made here): refused, the server never
    /// had it, and discarding it removes the row.
    public let createsRecord: Bool

    /// The last `OutboxEntry.shortIDLength` characters of the id, as lists show it.
    public var shortID: String { String(id.suffix(OutboxEntry.shortIDLength)) }

    /// Whether the device knows what the server holds of the record: its record, or that it has none.
    public var knowsServerState: Bool { serverRecord != nil || code != nil }

    /// Every failed change, oldest first.
    static func all(_ db: Database) throws -> [FailedChange] {
        try Row.fetchAll(db, sql: """
            SELECT * FROM eventual_outbox WHERE state = 'failed' AND kind = 'change' ORDER BY position
            """).map { try FailedChange(row: $0, db) }
    }

    /// The failed change whose entry is `id`.
    static func one(_ id: String, _ db: Database) throws -> FailedChange? {
        try Row.fetchOne(db, sql: "SELECT * FROM eventual_outbox WHERE id = ? AND state = 'failed' AND kind = 'change'", arguments: [id])
            .map { try FailedChange(row: $0, db) }
    }

    /// Keeps the server's newest record beside the failed changes of it, as a pull brings it, so
    /// that settling restores what the server holds now, not what it held when it refused.
    static func keep(_ record: RemoteRecord, _ db: Database) throws {
        let pulled = SyncWire.PulledRecord(collection: record.collection, recordId: record.recordID, fields: record.fields,
                                           deleted: record.deleted, hlc: record.hlc, space: record.space, changedBy: record.changedBy)
        try db.cachedStatement(sql: """
            UPDATE eventual_outbox SET server_record = ?
            WHERE operation = ? AND kind = 'change' AND record_id = ? AND state = 'failed'
            """).execute(arguments: [try JSONEncoder.sorted.encode(pulled), record.collection, record.recordID])
    }

    private init(row: Row, _ db: Database) throws {
        id = row["id"]
        collection = row["operation"]
        recordID = row["record_id"] ?? ""
        space = row["space"]
        let change = try JSONDecoder().decode(ChangePayload.self, from: row["payload"] as Data)
        fields = change.fields
        deltas = change.deltas ?? [:]
        deleted = change.deleted
        reason = row["last_error"] ?? "refused by the server"
        code = row["rejection_code"]
        field = row["rejection_field"]
        createdAt = row["created_at"]
        attempts = row["attempts"] ?? 0
        createsRecord = row["creates_record"]
        if let data = row["server_record"] as Data?, let record = try? JSONDecoder().decode(SyncWire.PulledRecord.self, from: data) {
            // NB: kept as the server sent it: the person's own space by its id, which the rows keep as NULL.
            let personal = try record.space.map { try SpaceTable.isPersonal($0, db) } ?? true
            serverRecord = RemoteRecord(collection: record.collection, recordID: record.recordId, fields: record.fields,
                                        deleted: record.deleted, hlc: record.hlc, space: personal ? nil : record.space,
                                        changedBy: record.changedBy)
        } else {
            serverRecord = nil
        }
    }
}

/// How a person settles a refused change.
public enum SettleChoice: Sendable, Equatable {
    /// Take the server's record and drop the change.
    case takeTheirs
    /// Stamp the change again, with `edits` over what it set (an edited counter is set, no longer
    /// added to), and queue it.
    case keepMine(edits: [String: SyncValue] = [:])
    /// Drop the change and go back to what the server holds.
    case discard
    /// Keep the record as the person's own, in their personal space, under a new id, with `edits`
    /// over it (what the app needs there: an account of their own); the change in the shared
    /// space is dropped as by `discard`. For a change in a space the person left, was removed
    /// from, or only views.
    case keepAsOwn(edits: [String: SyncValue] = [:])
}

/// What settling a refused change did.
public struct Settlement: Sendable, Equatable {
    public let change: FailedChange
    public let choice: SettleChoice
    /// Keep mine: the id of the change queued in its place.
    public let queued: String?
    /// Keep as own: the id of the record made in the person's own space.
    public var keptAs: String? = nil
    /// Whether the row now shows the server's state. False only for a discard of a change whose
    /// refusal did not say what the server holds: the row keeps the change until the server's
    /// version of the record next arrives.
    public let restored: Bool
    /// Whether the server's version of the record was fetched by the settle itself (the device
    /// asks for it after a change is dropped): the row shows it now, whatever `restored` says.
    public var fetched = false

    /// Whether the row went from this device because the server holds no such record (taking
    /// theirs, or discarding): `neverOnServer` says when that is because the change made it here.
    public var removed: Bool { restored && (change.serverRecord?.deleted ?? true) }

    /// Whether the record was made on this device and the server never had it: discarding its
    /// refused creation removed it.
    public var neverOnServer: Bool { removed && change.createsRecord && change.serverRecord == nil }
}

/// Why a refused change could not be settled.
public enum SettleError: Error, Equatable, CustomStringConvertible {
    /// Take theirs, when the server did not say what it holds.
    case serverStateUnknown(String)
    /// A change of a collection this app does not mirror.
    case unknownCollection(String)
    /// A refused call: it can be retried or discarded, not settled.
    case notAChange(String)
    /// Keep mine, for a change in a space the person is no longer in (`space`: its name).
    case notInSpace(String, reason: String)
    /// Keep as own, for a change in the person's own space, or a deletion.
    case ownAlready(String)

    public var description: String {
        switch self {
        case .serverStateUnknown(let id):
            return "The server did not say what it holds for the record of \(id): keep yours, or discard yours"
        case .unknownCollection(let name): return "This app version does not keep \(name)"
        case .notAChange(let id): return "\(id) is not a change of a record: retry it or discard it"
        case .notInSpace(let id, let reason):
            return "\(reason.hasSuffix(".") ? String(reason.dropLast()) : reason): sent again, \(id) is refused again; keep it as your own or discard it"
        case .ownAlready(let id): return "\(id) is not a change of a shared record: keep yours, take theirs or discard yours"
        }
    }
}
