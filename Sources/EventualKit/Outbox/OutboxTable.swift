import EventualAPI
import Foundation
import GRDB

/// The outbox's SQL, used inside the caller's transaction.
enum OutboxTable {
    static func append(
        kind: OutboxEntry.Kind, operation: String, recordID: String?, space: String? = nil, payload: Data, coalescingKey: String?,
        createsRecord: Bool = false, db: Database
    ) throws -> String {
        let now = UnixMillis.now()
        let id = UUIDv7.make(millis: now)
        if let coalescingKey {
            // NB: only unsent entries are replaced; one in flight may already be on the server.
            try db.execute(sql: "DELETE FROM eventual_outbox WHERE coalescing_key = ? AND state = 'pending'",
                           arguments: [coalescingKey])
        }
        try db.execute(sql: """
            INSERT INTO eventual_outbox (id, kind, operation, record_id, space, payload, coalescing_key, created_at, creates_record)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [id, kind.rawValue, operation, recordID, space, payload, coalescingKey, now, createsRecord])
        return id
    }

    /// Queues changes ahead of everything waiting, in the order given (a record sent back after a
    /// restore is older than any change waiting to be made to it).
    static func prepend(changes: [(operation: String, recordID: String, space: String?, payload: Data)], db: Database) throws {
        guard !changes.isEmpty else { return }
        let first = (try Int64.fetchOne(db, sql: "SELECT MIN(position) FROM eventual_outbox") ?? 1) - Int64(changes.count)
        let now = UnixMillis.now()
        for (offset, change) in changes.enumerated() {
            try db.execute(sql: """
                INSERT INTO eventual_outbox (position, id, kind, operation, record_id, space, payload, created_at)
                VALUES (?, ?, 'change', ?, ?, ?, ?, ?)
                """, arguments: [first + Int64(offset), UUIDv7.make(millis: now), change.operation, change.recordID, change.space,
                                 change.payload, now])
        }
    }

    static func hasPending(coalescingKey: String, db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM eventual_outbox WHERE coalescing_key = ? AND state = 'pending')",
                          arguments: [coalescingKey]) ?? false
    }

    static func resetInFlight(_ db: Database) throws {
        try db.execute(sql: "UPDATE eventual_outbox SET state = 'pending', next_attempt_at = 0 WHERE state = 'inFlight'")
    }

    /// The oldest due entries of a kind, up to `limit` and `maxBytes` (of changes, the bytes of the
    /// push that carries them; of calls, about that of payload), marked in flight: only those
    /// queued before `position`, and no call to one of `excluding`, when given. The first entry
    /// goes whatever its size.
    static func claim(kind: OutboxEntry.Kind, limit: Int, maxBytes: Int, now: Int64, before position: Int64? = nil,
                      excluding operations: Set<String> = [], db: Database) throws -> [OutboxEntry] {
        let rows = try Row.fetchAll(db, sql: """
            SELECT * FROM eventual_outbox
            WHERE state = 'pending' AND kind = ? AND next_attempt_at <= ? AND position < ?
            \(operations.isEmpty ? "" : "AND operation NOT IN (\(placeholders(operations.count)))")
            \(kind == .change ? try NewerAppWait.claimCondition(db) : "")
            ORDER BY position LIMIT ?
            """, arguments: [kind.rawValue, now, position ?? .max] + StatementArguments(operations.sorted()) + [limit])
        var entries: [OutboxEntry] = []
        var bytes = kind == .change ? SyncWire.pushBodyEnvelope : 0
        for row in rows {
            let entry = OutboxEntry(row: row)
            // NB: a change counts what it takes in the push's body, as the server's body limit does.
            let cost = kind == .change ? SyncWire.pushBytes(of: entry) : entry.payload.count + 200
            if !entries.isEmpty, bytes + cost > maxBytes { break }
            bytes += cost
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

    /// The oldest waiting call to one of `operations`, due or not.
    static func firstWaitingCall(to operations: Set<String>, db: Database) throws -> OutboxEntry? {
        try Row.fetchOne(db, sql: """
            SELECT * FROM eventual_outbox WHERE state = 'pending' AND kind = 'call' AND operation IN (\(placeholders(operations.count)))
            ORDER BY position LIMIT 1
            """, arguments: StatementArguments(operations.sorted())).map(OutboxEntry.init(row:))
    }

    /// One waiting entry, marked in flight; nil when it no longer waits.
    static func claim(id: String, db: Database) throws -> OutboxEntry? {
        try db.execute(sql: "UPDATE eventual_outbox SET state = 'inFlight' WHERE id = ? AND state = 'pending'", arguments: [id])
        guard db.changesCount == 1 else { return nil }
        return try Row.fetchOne(db, sql: "SELECT * FROM eventual_outbox WHERE id = ?", arguments: [id]).map(OutboxEntry.init(row:))
    }

    /// Moves every waiting change to `space` to failed with `message`; returns their ids.
    static func failChanges(in space: String, message: String, db: Database) throws -> [String] {
        let ids = try String.fetchAll(db, sql: """
            SELECT id FROM eventual_outbox WHERE kind = 'change' AND space = ? AND state = 'pending' ORDER BY position
            """, arguments: [space])
        try db.execute(sql: "UPDATE eventual_outbox SET state = 'failed', last_error = ? WHERE kind = 'change' AND space = ? AND state = 'pending'",
                       arguments: [message, space])
        return ids
    }

    static func remove(ids: [String], db: Database) throws {
        for chunk in ids.chunked(into: 500) {
            try db.execute(sql: "DELETE FROM eventual_outbox WHERE id IN (\(placeholders(chunk.count)))", arguments: StatementArguments(chunk))
        }
    }

    /// Failed with the server's words and, for a rule's refusal, its code, field and record.
    static func markFailed(id: String, message: String, code: String? = nil, field: String? = nil, serverRecord: Data? = nil,
                           db: Database) throws {
        try db.execute(sql: """
            UPDATE eventual_outbox SET state = 'failed', attempts = attempts + 1, last_error = ?,
                rejection_code = ?, rejection_field = ?, server_record = ?
            WHERE id = ?
            """, arguments: [message, code, field, serverRecord, id])
    }

    /// A change stamped again, back to pending and due now, with why it had to be.
    static func replacePayload(id: String, payload: Data, error: String, db: Database) throws {
        try db.execute(sql: """
            UPDATE eventual_outbox SET payload = ?, state = 'pending', attempts = attempts + 1, next_attempt_at = 0, last_error = ?
            WHERE id = ?
            """, arguments: [payload, error, id])
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

    /// The edits of these records of a collection that the server has not acknowledged yet, by
    /// record id (records with none are absent), in one query per 500 ids.
    static func unacknowledgedEdits(collection: String, recordIDs: [String], db: Database) throws -> [String: PendingEdits] {
        var edits: [String: PendingEdits] = [:]
        let decoder = JSONDecoder()
        for chunk in Array(Set(recordIDs)).chunked(into: 500) {
            let rows = try Row.fetchAll(db, sql: """
                SELECT record_id, payload FROM eventual_outbox
                WHERE operation = ? AND kind = 'change' AND record_id IN (\(placeholders(chunk.count)))
                ORDER BY position
                """, arguments: StatementArguments([collection]) + StatementArguments(chunk))
            for row in rows {
                let change = try decoder.decode(ChangePayload.self, from: row["payload"] as Data)
                edits[row["record_id"], default: PendingEdits()].add(change)
            }
        }
        return edits
    }

    /// Every entry, or those in one state, oldest first.
    static func entries(state: OutboxEntry.State?, db: Database) throws -> [OutboxEntry] {
        if let state {
            return try Row.fetchAll(db, sql: "SELECT * FROM eventual_outbox WHERE state = ? ORDER BY position",
                                    arguments: [state.rawValue]).map(OutboxEntry.init(row:))
        }
        return try Row.fetchAll(db, sql: "SELECT * FROM eventual_outbox ORDER BY position").map(OutboxEntry.init(row:))
    }

    /// A failed entry back to pending, due now; false when `id` is not a failed entry.
    static func retryFailed(id: String, db: Database) throws -> Bool {
        try db.execute(sql: "UPDATE eventual_outbox SET state = 'pending', next_attempt_at = 0 WHERE id = ? AND state = 'failed'",
                       arguments: [id])
        return db.changesCount == 1
    }

    /// Removes a failed entry; false when `id` is not a failed entry.
    static func discardFailed(id: String, db: Database) throws -> Bool {
        try db.execute(sql: "DELETE FROM eventual_outbox WHERE id = ? AND state = 'failed'", arguments: [id])
        return db.changesCount == 1
    }

    /// Every pending entry due now, backoff or not (a person asked to sync).
    static func makeAllDue(_ db: Database) throws {
        try db.execute(sql: "UPDATE eventual_outbox SET next_attempt_at = 0 WHERE state = 'pending'")
    }

    /// When the next entry is due, leaving out the changes that wait for a newer app version
    /// (`NewerAppWait`): they are due when the server serves it, which a round asks.
    static func earliestDue(_ db: Database) throws -> Int64? {
        // NB: ORDER BY and LIMIT rather than MIN, so that the (state, next_attempt_at) index finds the first that may go.
        try Int64.fetchOne(db, sql: """
            SELECT next_attempt_at FROM eventual_outbox WHERE state = 'pending' \(try NewerAppWait.claimCondition(db))
            ORDER BY next_attempt_at LIMIT 1
            """)
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
