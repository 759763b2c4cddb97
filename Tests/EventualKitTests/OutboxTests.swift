import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

@Suite("Outbox", .timeLimit(.minutes(2)))
struct OutboxTests {
    func makeStore(_ scratch: ScratchFolder) throws -> LocalStore {
        try LocalStore(path: scratch.url.appendingPathComponent("s.sqlite").path, migrations: [itemsMigration])
    }

    @Test func aWriteAndItsOutboxEntryCommitTogetherOrNotAtAll() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let store = try makeStore(scratch)
        // When a write fails after queueing its change
        await #expect(throws: TestFailure.self) {
            try await store.write { tx in
                try tx.db.execute(sql: "INSERT INTO items (id, name) VALUES ('a', 'Milk')")
                try tx.recordChange(SyncCollections.pantryItems, id: "a", fields: ["name": "Milk"])
                throw TestFailure("the app failed half-way")
            }
        }
        // Then neither the row nor the entry exists
        let rows = try await store.reader.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM items") }
        #expect(rows == 0)
        #expect(try Outbox(store: store).entries().isEmpty)
    }

    @Test func entriesKeepTheOrderTheUserMadeThem() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let store = try makeStore(scratch)
        for index in 0..<50 {
            try await store.write { tx in
                try tx.recordChange(SyncCollections.pantryItems, id: "r\(index)", fields: ["quantity": .number(Double(index))])
            }
        }
        let entries = try Outbox(store: store).entries()
        #expect(entries.map(\.recordID) == (0..<50).map { "r\($0)" })
        #expect(entries.map(\.id) == entries.map(\.id).sorted(), "UUIDv7 ids sort by creation")
        let stamps = try entries.map { try JSONDecoder().decode(ChangePayload.self, from: $0.payload).hlc }
        #expect(stamps == stamps.sorted() && Set(stamps).count == 50)
    }

    @Test func aNewerCallWithTheSameCoalescingKeyReplacesAnUnsentOne() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let store = try makeStore(scratch)
        struct Position: Codable { let lat: Double }
        try await store.write { tx in try tx.enqueueCall("position", payload: Position(lat: 1), coalescingKey: "last-position") }
        try await store.write { tx in try tx.enqueueCall("other", payload: Position(lat: 9)) }
        try await store.write { tx in try tx.enqueueCall("position", payload: Position(lat: 2), coalescingKey: "last-position") }
        let entries = try Outbox(store: store).entries()
        #expect(entries.map(\.operation) == ["other", "position"])
        #expect(try JSONDecoder().decode(Position.self, from: entries[1].payload).lat == 2)
    }

    @Test func aBatchOfChangesIsClaimedByTheBytesItsPushTakesOnTheWire() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let store = try makeStore(scratch)
        // Given changes of long record ids, some in a space, with text that is escaped on the wire
        for index in 0..<40 {
            try await store.write { tx in
                try tx.recordChange(SyncCollections.pantryItems, id: String(repeating: "👍", count: 100) + "\"\(index)",
                                    fields: ["name": .string(String(repeating: "\\", count: 200)), "description": "two\n\tlines"],
                                    space: index % 2 == 0 ? String(repeating: "é", count: 128) : nil)
            }
        }
        // When batches are claimed by a budget of 20,000 bytes
        var batches: [[OutboxEntry]] = []
        while true {
            let batch = try await store.writer.write { db in try OutboxTable.claim(kind: .change, limit: 500, maxBytes: 20_000, now: .max, db: db) }
            if batch.isEmpty { break }
            batches.append(batch)
        }
        // Then each push body fits the budget, and is as large as the budget allows
        #expect(batches.map(\.count).reduce(0, +) == 40)
        for (index, batch) in batches.enumerated() {
            let body = SyncWire.pushBody(batch).count
            #expect(body <= 20_000, "\(body)")
            #expect(SyncWire.pushBodyEnvelope + batch.map(SyncWire.pushBytes(of:)).reduce(0, +) - body <= 2, "counted exactly, give or take a comma")
            if index < batches.count - 1 { #expect(body + SyncWire.pushBytes(of: batches[index + 1][0]) > 20_000 - 2) }
        }
    }

    @Test func anInFlightEntryIsNotReplacedByCoalescing() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let store = try makeStore(scratch)
        try await store.write { tx in try tx.enqueueCall("position", payload: [1], coalescingKey: "k") }
        _ = try await store.writer.write { db in try OutboxTable.claim(kind: .call, limit: 1, maxBytes: .max, now: .max, db: db) }
        try await store.write { tx in try tx.enqueueCall("position", payload: [2], coalescingKey: "k") }
        #expect(try Outbox(store: store).entries().count == 2)
    }

    @Test func entriesLeftInFlightByACrashArePendingAfterRestart() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let path = scratch.url.appendingPathComponent("s.sqlite").path
        do {
            let store = try LocalStore(path: path, migrations: [itemsMigration])
            try await store.write { tx in try tx.recordChange(SyncCollections.pantryItems, id: "a", fields: ["name": "Tea"]) }
            let claimed = try await store.writer.write { db in
                try OutboxTable.claim(kind: .change, limit: 10, maxBytes: .max, now: .max, db: db)
            }
            #expect(claimed.count == 1)
            #expect(try Outbox(store: store).entries(state: .inFlight).count == 1)
        }
        // When the app starts again
        let reopened = try LocalStore(path: path, migrations: [itemsMigration])
        // Then the entry waits to be sent again
        let entries = try Outbox(store: reopened).entries()
        #expect(entries.map(\.state) == [.pending])
    }

    @Test func aRestartedStoreStampsAfterItsLastChange() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let path = scratch.url.appendingPathComponent("s.sqlite").path
        let first = try LocalStore(path: path)
        try await first.write { tx in try tx.recordChange(SyncCollections.pantryItems, id: "a", fields: ["name": "Tea"]) }
        let last = first.clock.latest
        let second = try LocalStore(path: path)
        #expect(second.node == first.node)
        #expect(second.clock.tick() > last)
    }

    @Test func aFieldTheCollectionDoesNotHaveIsRefusedLocally() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let store = try makeStore(scratch)
        await #expect(throws: LocalStoreError.unknownField(collection: "pantry_items", field: "colour")) {
            try await store.write { tx in try tx.recordChange(SyncCollections.pantryItems, id: "a", fields: ["colour": "red"]) }
        }
    }

    @Test func oneFailedEntryIsRetriedOrDiscardedByTheIdListsShow() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let store = try makeStore(scratch)
        // Given three changes, two of them refused by the server
        for index in 0..<3 {
            try await store.write { tx in try tx.recordChange(SyncCollections.pantryItems, id: "r\(index)", fields: ["name": "n"]) }
        }
        let ids = try Outbox(store: store).entries().map(\.id)
        try await store.writer.write { db in
            try OutboxTable.markFailed(id: ids[0], message: "no", db: db)
            try OutboxTable.markFailed(id: ids[1], message: "no", db: db)
        }
        let outbox = Outbox(store: store)
        // When one is retried by its last 8 characters
        let retried = try await outbox.retry(String(ids[0].suffix(8)).uppercased())
        // Then only that one waits again
        #expect(retried.id == ids[0])
        #expect(try outbox.counts() == OutboxCounts(pending: 2, failed: 1))
        // And the other is discarded by its whole id, and only it goes
        try await outbox.discard(ids[1])
        #expect(try outbox.entries().map(\.id) == [ids[0], ids[2]])
        // And an id too short to be safe, or one that is not failed, picks nothing
        await #expect(throws: OutboxError.idTooShort("abc")) { try await outbox.discard("abc") }
        await #expect(throws: OutboxError.notFailed(String(ids[2].suffix(8)))) { try await outbox.discard(String(ids[2].suffix(8))) }
        #expect(try outbox.entries().count == 2)
    }

    @Test func backoffGrowsWithJitterAndIsCapped() {
        let backoff = Backoff(initial: .seconds(1), maximum: .seconds(60))
        var generator = SeededGenerator(seed: 7)
        let delays = (0..<10).map { backoff.delay(afterFailures: $0, using: &generator).milliseconds }
        for (failures, delay) in delays.enumerated() {
            let ceiling = Int64(backoff.ceilingMillis(afterFailures: failures))
            #expect(delay >= ceiling / 2 && delay <= ceiling, "after \(failures) failures: \(delay) ms")
        }
        #expect(delays.last! <= 60_000)
        #expect(backoff.ceilingMillis(afterFailures: 3) == 8_000)
    }
}

/// Reproducible randomness for tests (the fault proxy's SplitMix64).
typealias SeededGenerator = FaultProxy.SeededGenerator
