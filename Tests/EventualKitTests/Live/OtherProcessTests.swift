import Foundation
import GRDB
import Synchronization
import Testing
@testable import EventualKit

/// Another process on the device is another SQLite connection to the same file: a second
/// `DatabasePool` here stands for it (SQLite cannot tell them apart).
@Suite("Other processes: their commits are heard, this process's never, and a removed file ends", .timeLimit(.minutes(1)))
struct OtherProcessTests {
    static let notes = LocalMigration("notes") { db in
        try db.execute(sql: "CREATE TABLE notes (id TEXT PRIMARY KEY, text TEXT NOT NULL); CREATE TABLE other (id INTEGER PRIMARY KEY)")
    }

    /// Longer than the poll's second, with its leeway.
    static let pollAndSome = Duration.milliseconds(2_500)

    @Test func onlyAnotherConnectionsCommitIsHeardAndEveryListenerHearsIt() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.url.appendingPathComponent("local.sqlite").path
        let store = try LocalStore(path: path, migrations: [Self.notes])
        let first = Heard(await store.otherProcessEvents())
        let second = Heard(await store.otherProcessEvents())
        // When this process writes, through the store and around it, for longer than a poll
        for index in 0..<20 {
            try await store.write { tx in try tx.db.execute(sql: "INSERT INTO notes (id, text) VALUES (?, 'x')", arguments: ["\(index)"]) }
        }
        try await store.writer.write { db in try db.execute(sql: "INSERT INTO other (id) VALUES (1)") }
        try await Task.sleep(for: Self.pollAndSome)
        // Then nothing is heard
        #expect(first.events.isEmpty && second.events.isEmpty)
        // When another connection commits
        let other = try DatabasePool(path: path)
        try await other.write { db in try db.execute(sql: "INSERT INTO other (id) VALUES (2)") }
        // Then both listeners hear it
        try await first.wait { $0 == [.committed] }
        try await second.wait { $0 == [.committed] }
        await first.cancel()
        // And one listener leaving does not stop the other's
        try await other.write { db in try db.execute(sql: "INSERT INTO other (id) VALUES (3)") }
        try await second.wait { $0 == [.committed, .committed] }
        await second.cancel()
    }

    @Test func aRemovedOrReplacedFileEndsEveryListenerAndOneThatComesLaterAtOnce() async throws {
        for replaced in [false, true] {
            let scratch = try ScratchFolder()
            defer { scratch.remove() }
            let path = scratch.url.appendingPathComponent("local.sqlite").path
            let store = try LocalStore(path: path, migrations: [Self.notes])
            let listener = Heard(await store.otherProcessEvents())
            // When the person signs out in another process (the folder removed), or someone
            // else signs in there (another database at the same path)
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            if replaced { _ = try DatabaseQueue(path: path) }
            // Then the listener hears it once and its stream ends
            try await listener.waitForEnd()
            #expect(listener.events == [.removed])
            // And a listener that comes later hears it at once
            let later = Heard(await store.otherProcessEvents())
            try await later.waitForEnd()
            #expect(later.events == [.removed])
        }
    }

    @Test func aLiveQueryReadsAfreshForAnotherProcessOnlyAndEndsWhenItsFileGoes() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.url.appendingPathComponent("local.sqlite").path
        let store = try LocalStore(path: path, migrations: [Self.notes])
        // Given a live query of the notes that also shows a count of another, untracked, table
        // (as a pantry list shows the time of the last sync)
        let live = LiveValues(store.observe(tables: ["notes"]) { db in
            try String.fetchAll(db, sql: "SELECT text FROM notes ORDER BY id") + ["\(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM other") ?? 0)"]
        })
        try await live.wait { $0 == ["0"] }
        // When this process writes the untracked table (as every sync round writes its time)
        try await store.writer.write { db in try db.execute(sql: "INSERT INTO other (id) VALUES (1)") }
        try await Task.sleep(for: Self.pollAndSome)
        // Then the query reads nothing afresh: nothing is emitted
        #expect(live.all == [["0"]])
        // When another process adds a note
        let other = try DatabasePool(path: path)
        try await other.write { db in try db.execute(sql: "INSERT INTO notes (id, text) VALUES ('a', 'milk')") }
        // Then the query shows it, with what this process wrote meanwhile
        try await live.wait { $0 == ["milk", "1"] }
        #expect(live.all == [["0"], ["milk", "1"]])
        // When the file is removed (signed out in another process)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        // Then the query ends with LocalDataRemoved
        let ended = try await live.waitForEnd()
        #expect(ended is LocalDataRemoved)
    }

    @Test func aStoreInMemoryHasNoOtherProcess() async throws {
        let store = try LocalStore(writer: DatabaseQueue(), migrations: [Self.notes])
        let listener = Heard(await store.otherProcessEvents())
        try await listener.waitForEnd()
        #expect(listener.events.isEmpty)
    }
}

/// Every event a stream of other processes' events gave, until it ended or was cancelled.
private final class Heard: Sendable {
    private final class Seen: Sendable {
        let state = Mutex<(events: [OtherProcessEvent], ended: Bool)>(([], false))
    }
    private let seen = Seen()
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ stream: AsyncStream<OtherProcessEvent>) {
        let running = Task { [seen] in
            for await event in stream { seen.state.withLock { $0.events.append(event) } }
            seen.state.withLock { $0.ended = true }
        }
        task.withLock { $0 = running }
    }

    var events: [OtherProcessEvent] { seen.state.withLock { $0.events } }

    func wait(until condition: ([OtherProcessEvent]) -> Bool) async throws {
        try await waitUntil(within: .seconds(10)) { condition(events) }
    }

    func waitForEnd() async throws {
        try await waitUntil(within: .seconds(10)) { seen.state.withLock { $0.ended } }
    }

    func cancel() async {
        let running = task.withLock { $0 }
        running?.cancel()
        await running?.value
    }

    private func waitUntil(within limit: Duration, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("not within \(limit); heard: \(events)")
    }
}
