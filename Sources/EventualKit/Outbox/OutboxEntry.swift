import Foundation
import GRDB

/// One user intent waiting to reach the server.
public struct OutboxEntry: Sendable, Equatable, Identifiable {
    public enum Kind: String, Sendable { case change, call }
    public enum State: String, Sendable { case pending, inFlight, failed }

    /// A UUIDv7; the change id or `Idempotency-Key` the server remembers.
    public let id: String
    /// FIFO order.
    public let position: Int64
    public let kind: Kind
    /// The collection of a change, or the operation of a call.
    public let operation: String
    public let recordID: String?
    public let payload: Data
    public let coalescingKey: String?
    /// Unix milliseconds.
    public let createdAt: Int64
    public let attempts: Int
    public let nextAttemptAt: Int64
    /// The last failure, for people.
    public let lastError: String?
    public let state: State

    init(row: Row) {
        id = row["id"]
        position = row["position"]
        kind = Kind(rawValue: row["kind"]) ?? .call
        operation = row["operation"]
        recordID = row["record_id"]
        payload = row["payload"]
        coalescingKey = row["coalescing_key"]
        createdAt = row["created_at"]
        attempts = row["attempts"]
        nextAttemptAt = row["next_attempt_at"]
        lastError = row["last_error"]
        state = State(rawValue: row["state"]) ?? .pending
    }

    private init(copying entry: OutboxEntry, state: State) {
        id = entry.id
        position = entry.position
        kind = entry.kind
        operation = entry.operation
        recordID = entry.recordID
        payload = entry.payload
        coalescingKey = entry.coalescingKey
        createdAt = entry.createdAt
        attempts = entry.attempts
        nextAttemptAt = entry.nextAttemptAt
        lastError = entry.lastError
        self.state = state
    }

    func with(state: State) -> OutboxEntry { OutboxEntry(copying: self, state: state) }
}

/// Counts for a status line.
public struct OutboxCounts: Sendable, Equatable {
    public var pending: Int
    public var failed: Int
    public init(pending: Int = 0, failed: Int = 0) {
        self.pending = pending
        self.failed = failed
    }
}

/// The outbox's SQL, used inside the caller's transaction.
enum OutboxTable {
    static func append(
        kind: OutboxEntry.Kind, operation: String, recordID: String?, payload: Data, coalescingKey: String?, db: Database
    ) throws -> String {
        let now = UnixTime.nowMillis()
        let id = UUIDv7.make(millis: now)
        if let coalescingKey {
            // NB: only unsent entries are replaced; one in flight may already be on the server.
            try db.execute(sql: "DELETE FROM eventual_outbox WHERE coalescing_key = ? AND state = 'pending'",
                           arguments: [coalescingKey])
        }
        try db.execute(sql: """
            INSERT INTO eventual_outbox (id, kind, operation, record_id, payload, coalescing_key, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, arguments: [id, kind.rawValue, operation, recordID, payload, coalescingKey, now])
        return id
    }

    static func resetInFlight(_ db: Database) throws {
        try db.execute(sql: "UPDATE eventual_outbox SET state = 'pending', next_attempt_at = 0 WHERE state = 'inFlight'")
    }

    /// The oldest due entries of a kind, up to `limit` and about `maxBytes` of payload, marked in flight.
    static func claim(kind: OutboxEntry.Kind, limit: Int, maxBytes: Int, now: Int64, db: Database) throws -> [OutboxEntry] {
        let rows = try Row.fetchAll(db, sql: """
            SELECT * FROM eventual_outbox
            WHERE state = 'pending' AND kind = ? AND next_attempt_at <= ?
            ORDER BY position LIMIT ?
            """, arguments: [kind.rawValue, now, limit])
        var entries: [OutboxEntry] = []
        var bytes = 0
        for row in rows {
            let entry = OutboxEntry(row: row)
            if !entries.isEmpty, bytes + entry.payload.count > maxBytes { break }
            bytes += entry.payload.count + 200
            entries.append(entry)
        }
        guard !entries.isEmpty else { return [] }
        let ids = entries.map(\.id)
        for chunk in ids.chunked(into: 500) {
            try db.execute(sql: "UPDATE eventual_outbox SET state = 'inFlight' WHERE id IN (\(placeholders(chunk.count)))",
                           arguments: StatementArguments(chunk))
        }
        return entries.map { $0.with(state: .inFlight) }
    }

    static func remove(ids: [String], db: Database) throws {
        for chunk in ids.chunked(into: 500) {
            try db.execute(sql: "DELETE FROM eventual_outbox WHERE id IN (\(placeholders(chunk.count)))", arguments: StatementArguments(chunk))
        }
    }

    static func markFailed(id: String, message: String, db: Database) throws {
        try db.execute(sql: "UPDATE eventual_outbox SET state = 'failed', attempts = attempts + 1, last_error = ? WHERE id = ?",
                       arguments: [message, id])
    }

    /// Back to pending, not before `retryAt`.
    static func reschedule(ids: [String], retryAt: Int64, error: String, countsAsAttempt: Bool, db: Database) throws {
        let increment = countsAsAttempt ? 1 : 0
        for chunk in ids.chunked(into: 500) {
            try db.execute(sql: """
                UPDATE eventual_outbox SET state = 'pending', attempts = attempts + ?, next_attempt_at = ?, last_error = ?
                WHERE id IN (\(placeholders(chunk.count)))
                """, arguments: StatementArguments([increment, retryAt, error] as [any DatabaseValueConvertible]) + StatementArguments(chunk))
        }
    }

    static func counts(_ db: Database) throws -> OutboxCounts {
        var counts = OutboxCounts()
        for row in try Row.fetchAll(db, sql: "SELECT state, COUNT(*) AS n FROM eventual_outbox GROUP BY state") {
            let state: String = row["state"], count: Int = row["n"]
            if state == "failed" { counts.failed += count } else { counts.pending += count }
        }
        return counts
    }

    /// Fields of a record that have a change not yet acknowledged (nil: a delete is pending).
    static func unacknowledgedFields(collection: String, recordID: String, db: Database) throws -> Set<String>? {
        var fields = Set<String>()
        let payloads = try Data.fetchAll(db, sql: """
            SELECT payload FROM eventual_outbox WHERE operation = ? AND record_id = ? AND kind = 'change'
            """, arguments: [collection, recordID])
        for payload in payloads {
            let change = try JSONDecoder().decode(ChangePayload.self, from: payload)
            if change.deleted { return nil }
            fields.formUnion(change.fields.keys)
        }
        return fields
    }

    static func earliestDue(_ db: Database) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT MIN(next_attempt_at) FROM eventual_outbox WHERE state = 'pending'")
    }

    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ",")
    }
}

extension Array {
    func chunked(into size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
