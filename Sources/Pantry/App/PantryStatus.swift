import EventualAPI
import EventualKit
import Foundation
import GRDB

/// What `pantry status` shows.
public struct PantryStatus: Sendable, Equatable {
    public let connectivity: Connectivity
    public let pending: Int
    public let failed: Int
    /// Every outbox entry, oldest first.
    public let entries: [OutboxLine]
    /// Unix milliseconds of the last complete sync.
    public let lastSyncAt: Int64?
    /// Sign-outs the server has not heard of yet.
    public let pendingRevocations: Int
}

/// One outbox entry, said for people.
public struct OutboxLine: Sendable, Equatable, Codable {
    public let id: String
    public let state: OutboxEntry.State
    /// The item a change is about (nil for a knowledge-base contribution).
    public let itemId: String?
    /// "item Milk", "new product Pasta (8001234567890)", "vote +1 on …".
    public let summary: String
    public let attempts: Int
    /// The server's reason for a failed entry, or the last transient error.
    public let lastError: String?

    /// The id's last characters, as the status shows it and `retry`/`discard` take it.
    public var shortID: String { String(id.suffix(OutboxEntry.shortIDLength)) }

    init(entry: OutboxEntry, store: LocalStore) throws {
        id = entry.id
        state = entry.state
        itemId = entry.kind == .change ? entry.recordID : nil
        attempts = entry.attempts
        lastError = entry.lastError
        switch entry.kind {
        case .change:
            let name = try store.reader.read { db in
                try String.fetchOne(db, sql: "SELECT name FROM pantry_items WHERE id = ?", arguments: [entry.recordID ?? ""])
            }
            summary = "item \(name ?? String((entry.recordID ?? "?").prefix(8)))"
        case .call:
            if let post = try? JSONDecoder().decode(PostProductCall.self, from: entry.payload), entry.operation == KnowledgeBaseCalls.postProduct {
                summary = "new product \(post.name) (\((try? GTIN(post.barcode).shortForm) ?? post.barcode))"
            } else if let vote = try? JSONDecoder().decode(VoteCall.self, from: entry.payload) {
                summary = "vote \(vote.rating > 0 ? "+" : "")\(vote.rating) on a product of \((try? GTIN(vote.barcode).shortForm) ?? vote.barcode)"
            } else {
                summary = entry.operation
            }
        }
    }
}

extension OutboxEntry.State: Codable {}
