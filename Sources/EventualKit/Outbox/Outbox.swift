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

    /// Every entry (or those in one state), oldest first.
    public func entries(state: OutboxEntry.State? = nil) throws -> [OutboxEntry] {
        try store.reader.read { db in try OutboxTable.entries(state: state, db: db) }
    }

    /// Sends a failed entry again at the next sync.
    public func retry(_ id: String) async throws {
        try await store.writer.write { db in
            guard try OutboxTable.retryFailed(id: id, db: db) else { throw OutboxError.notFailed(id) }
        }
    }

    /// Gives up on a failed entry for good. The local copy keeps the change until the server's
    /// version of that record next arrives.
    public func discard(_ id: String) async throws {
        try await store.writer.write { db in
            guard try OutboxTable.discardFailed(id: id, db: db) else { throw OutboxError.notFailed(id) }
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
