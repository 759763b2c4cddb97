import EventualAPI
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
    /// The space a change is in (nil: the person's own), or the space a space call is about.
    public let space: String?
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
        space = row["space"]
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
        space = entry.space
        payload = entry.payload
        coalescingKey = entry.coalescingKey
        createdAt = entry.createdAt
        attempts = entry.attempts
        nextAttemptAt = entry.nextAttemptAt
        lastError = entry.lastError
        self.state = state
    }

    func with(state: State) -> OutboxEntry { OutboxEntry(copying: self, state: state) }

    /// How many of an id's last characters lists show, and `Outbox.retry`/`discard` need at least.
    public static let shortIDLength = 8

    /// The last `shortIDLength` characters of the id, as lists show it.
    public var shortID: String { String(id.suffix(Self.shortIDLength)) }
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
