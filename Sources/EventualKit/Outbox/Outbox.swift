import GRDB

/// What a person (or a status screen) can see and do with the queued changes.
public struct Outbox: Sendable {
    let store: LocalStore

    public init(store: LocalStore) {
        self.store = store
    }

    public func counts() throws -> OutboxCounts {
        try store.reader.read { db in try OutboxTable.counts(db) }
    }

    /// Every entry, oldest first.
    public func entries(state: OutboxEntry.State? = nil) throws -> [OutboxEntry] {
        try store.reader.read { db in
            if let state {
                return try Row.fetchAll(db, sql: "SELECT * FROM eventual_outbox WHERE state = ? ORDER BY position",
                                        arguments: [state.rawValue]).map(OutboxEntry.init(row:))
            }
            return try Row.fetchAll(db, sql: "SELECT * FROM eventual_outbox ORDER BY position").map(OutboxEntry.init(row:))
        }
    }

    /// Sends a failed entry again at the next sync.
    public func retry(_ id: String) async throws {
        try await store.writer.write { db in
            try db.execute(sql: """
                UPDATE eventual_outbox SET state = 'pending', next_attempt_at = 0 WHERE id = ? AND state = 'failed'
                """, arguments: [id])
            guard db.changesCount == 1 else { throw OutboxError.notFailed(id) }
        }
    }

    /// Gives up on a failed entry for good. The local copy keeps the change until the server's
    /// version of that record next arrives.
    public func discard(_ id: String) async throws {
        try await store.writer.write { db in
            try db.execute(sql: "DELETE FROM eventual_outbox WHERE id = ? AND state = 'failed'", arguments: [id])
            guard db.changesCount == 1 else { throw OutboxError.notFailed(id) }
        }
    }

    /// Drops every entry: only for a forced sign-out. Returns how many were dropped.
    func discardAll() async throws -> Int {
        try await store.writer.write { db in
            try db.execute(sql: "DELETE FROM eventual_outbox")
            return db.changesCount
        }
    }
}

public enum OutboxError: Error, Equatable, CustomStringConvertible {
    case notFailed(String)

    public var description: String {
        switch self {
        case .notFailed(let id): return "No failed outbox entry \(id)"
        }
    }
}
