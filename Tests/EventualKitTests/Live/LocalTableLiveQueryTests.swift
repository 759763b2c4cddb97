import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

@Suite("Live queries of an app's own tables: one value per committed change of them", .timeLimit(.minutes(1)))
struct LocalTableLiveQueryTests {
    static let notes = LocalMigration("notes") { db in
        try db.execute(sql: "CREATE TABLE notes (id TEXT PRIMARY KEY, text TEXT NOT NULL); CREATE TABLE other (id INTEGER PRIMARY KEY)")
    }

    func store() throws -> LocalStore { try LocalStore(writer: DatabaseQueue(), migrations: [Self.notes]) }

    @Test func aLocalTableEmitsOncePerChangeAndNeverForOtherTablesOrTheSameValue() async throws {
        // Given a live query of the notes
        let store = try store()
        let live = LiveValues(store.observe(tables: ["notes"]) { db in try String.fetchAll(db, sql: "SELECT text FROM notes ORDER BY id") })
        try await live.wait { $0 == [] }
        #expect(live.all == [[]])
        // When other tables change (an app's, the outbox), or a note is written with the text it has
        try await store.write { tx in
            try tx.db.execute(sql: "INSERT INTO other (id) VALUES (1)")
            _ = try tx.enqueueCall("notes.share", payload: ["id": "a"])
        }
        // Then nothing is emitted
        try await live.letStragglersArrive()
        #expect(live.all == [[]])
        // When a note is added
        try await store.write { tx in try tx.db.execute(sql: "INSERT INTO notes (id, text) VALUES ('a', 'milk')") }
        // Then the query emits it, once
        try await live.wait { $0 == ["milk"] }
        try await store.write { tx in try tx.db.execute(sql: "UPDATE notes SET text = 'milk' WHERE id = 'a'") }
        try await live.letStragglersArrive()
        #expect(live.all == [[], ["milk"]])
        await live.cancel()
    }

    @Test func withTheOutboxItEmitsWhenAnEntryIsQueuedRefusedAndDropped() async throws {
        // Given a live query of the notes and the outbox's entries
        let store = try store()
        let live = LiveValues(store.observe(tables: ["notes"], outbox: true) { db in
            try Outbox.entries(db).map(\.state.rawValue)
        })
        try await live.wait { $0 == [] }
        // When a call is queued, then refused by the server
        let id = try await store.write { tx in try tx.enqueueCall("notes.share", payload: ["id": "a"]) }
        try await live.wait { $0 == ["pending"] }
        try await store.writer.write { db in try OutboxTable.markFailed(id: id, message: "no such note", db: db) }
        try await live.wait { $0 == ["failed"] }
        // And dropped by the person
        _ = try await Outbox(store: store).discard(id)
        try await live.wait { $0 == [] }
        // Then each step emitted once
        try await live.letStragglersArrive()
        #expect(live.all == [[], ["pending"], ["failed"], []])
        await live.cancel()
    }
}
