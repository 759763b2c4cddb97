import Foundation
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

    /// The same, read in `db` (a live query's fetch, or a read that must agree with the app's tables).
    public static func entries(state: OutboxEntry.State? = nil, _ db: Database) throws -> [OutboxEntry] {
        try OutboxTable.entries(state: state, db: db)
    }

    /// Sends a failed entry again at the next sync. `id` is the entry's whole id or its last
    /// `OutboxEntry.shortIDLength` characters (or more), as lists show it. Returns the entry.
    @discardableResult
    public func retry(_ id: String) async throws -> OutboxEntry {
        let entry = try failedEntry(id)
        try await store.writer.write { db in
            guard try OutboxTable.retryFailed(id: entry.id, db: db) else { throw OutboxError.notFailed(id) }
        }
        return entry
    }

    /// Gives up on a failed entry for good (`id` as for `retry`). The local copy keeps the change
    /// until the server's version of that record next arrives. Returns the entry.
    @discardableResult
    public func discard(_ id: String) async throws -> OutboxEntry {
        let entry = try failedEntry(id)
        try await store.writer.write { db in
            guard try OutboxTable.discardFailed(id: entry.id, db: db) else { throw OutboxError.notFailed(id) }
        }
        return entry
    }

    /// The failed entry whose id is `id` or ends with it (at least `OutboxEntry.shortIDLength`
    /// characters: a shorter suffix could pick the wrong one).
    public func failedEntry(_ id: String) throws -> OutboxEntry {
        let id = id.trimmingCharacters(in: .whitespaces).lowercased()
        guard id.count >= OutboxEntry.shortIDLength else { throw OutboxError.idTooShort(id) }
        let matches = try entries(state: .failed).filter { $0.id.lowercased() == id || $0.id.lowercased().hasSuffix(id) }
        guard let entry = matches.first else { throw OutboxError.notFailed(id) }
        guard matches.count == 1 else { throw OutboxError.ambiguous(id, matches: matches.count) }
        return entry
    }
}

/// Why an outbox entry could not be retried or discarded.
public enum OutboxError: Error, Equatable, CustomStringConvertible {
    case notFailed(String)
    case idTooShort(String)
    case ambiguous(String, matches: Int)

    public var description: String {
        switch self {
        case .notFailed(let id): return "No refused change \(id) waits on this device"
        case .idTooShort(let id):
            return "'\(id)' is too short to pick a change: give the \(OutboxEntry.shortIDLength) characters the status shows"
        case .ambiguous(let id, let matches): return "\(id) matches \(matches) refused changes: give the whole id"
        }
    }
}
