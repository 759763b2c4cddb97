import EventualAPI
import Foundation
import GRDB
import Observation
import Synchronization
import Testing
@testable import EventualKit

/// The observable results and status a screen reads: one change per committed transaction that
/// changes the rows (this process's or another's), none for a write elsewhere, the error when the
/// device's data goes, and one change per status published.
@MainActor
@Suite("Observable results and status: one change per change, none for others", .timeLimit(.minutes(1)))
struct LiveResultsTests {
    static let other = LocalMigration("test-other") { db in try db.execute(sql: "CREATE TABLE other (id INTEGER PRIMARY KEY)") }

    /// Longer than the other processes' poll (a second), with its leeway.
    static let pollAndSome = Duration.milliseconds(2_500)

    private static func items(in store: LocalStore) -> LiveResults<Item> {
        LiveResults(store.observe(Device.items, id: \Item.id) { db in
            try Row.fetchAll(db, sql: "SELECT id, name, quantity, category FROM items ORDER BY name").map {
                Item(id: $0["id"], name: $0["name"], quantity: $0["quantity"], category: $0["category"])
            }
        })
    }

    private static func add(_ name: String, to store: LocalStore) async throws {
        try await store.write { tx in
            let id = UUID().uuidString
            try tx.db.execute(sql: "INSERT INTO items (id, name, quantity) VALUES (?, ?, 1)", arguments: [id, name])
            try tx.recordChange(SyncCollections.pantryItems, id: id, fields: ["name": .string(name), "quantity": 1], space: nil)
        }
    }

    @Test func aWriteToItsTableIsOneChangeAnotherProcessesCommitOneAndAWriteElsewhereNone() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.url.appendingPathComponent("store.sqlite").path
        let store = try LocalStore(path: path, migrations: [itemsMigration, Self.other])
        let results = Self.items(in: store)
        try await until { !results.isLoading }
        #expect(results.rows.isEmpty && results.error == nil)
        let changes = Changes { results.rows.map(\.row.name) }
        try await changes.wait(for: 1)

        // A write of this process to the table: one change, the row pending.
        try await Self.add("milk", to: store)
        try await changes.wait(for: 2)
        try await Task.sleep(for: .milliseconds(300))
        #expect(changes.values == [[], ["milk"]])
        #expect(results.rows.first?.state == .pending(count: 1))

        // A write to another table: none.
        try await store.writer.write { db in try db.execute(sql: "INSERT INTO other (id) VALUES (1)") }
        try await Task.sleep(for: .milliseconds(500))
        #expect(changes.values.count == 2)

        // Another process's commit to the table: one.
        let otherProcess = try DatabasePool(path: path)
        try await otherProcess.write { db in try db.execute(sql: "INSERT INTO items (id, name, quantity) VALUES ('b', 'bread', 1)") }
        try await changes.wait(for: 3)
        try await Task.sleep(for: Self.pollAndSome)
        #expect(changes.values == [[], ["milk"], ["bread", "milk"]])
        try otherProcess.close()
        changes.stop()
    }

    @Test func aRemovedDatabaseIsTheErrorAndTheRowsStay() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.url.appendingPathComponent("store.sqlite").path
        let store = try LocalStore(path: path, migrations: [itemsMigration])
        try await Self.add("milk", to: store)
        let results = Self.items(in: store)
        try await until { results.rows.count == 1 }
        // The person signs out in another process: the files go.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try await until { results.error != nil }
        #expect(results.error is LocalDataRemoved)
        #expect(results.rows.map(\.row.name) == ["milk"], "the rows as they were last")
    }

    @Test func aStoppedOrReleasedResultFollowsNoMore() async throws {
        let store = try LocalStore(writer: DatabaseQueue(), migrations: [itemsMigration])
        var results: LiveResults<Item>? = Self.items(in: store)
        try await until { results?.isLoading == false }
        results?.stop()
        try await Self.add("milk", to: store)
        try await Task.sleep(for: .milliseconds(300))
        #expect(results?.rows.isEmpty == true, "stopped: the write is not followed")
        weak var released = results
        results = nil
        try await until { released == nil }
    }

    @Test func aPublishedStatusIsOneChange() async throws {
        let store = try LocalStore(writer: DatabaseQueue(), migrations: [itemsMigration])
        // NB: a server nobody listens on: the engine is never asked to sync here.
        let link = ServerLink(serverURL: URL(string: "http://127.0.0.1:9")!, timeouts: .patient) { nil }
        let engine = SyncEngine(store: store, link: link, collections: [Device.items])
        let status = LiveSyncStatus(engine)
        await engine.refreshStatus()
        // NB: the engine's first publication (what it holds now) settles first.
        try await until { status.status.connectivity == .unknown && status.status.pending == 0 }
        try await Task.sleep(for: .milliseconds(300))
        let changes = Changes { status.status }
        try await Self.add("milk", to: store)
        await engine.refreshStatus()
        try await changes.wait(for: 2)
        try await Task.sleep(for: .milliseconds(300))
        #expect(changes.values.map(\.pending) == [0, 1], "one change for one status published: \(changes.values)")
        await engine.refreshStatus()
        try await Task.sleep(for: .milliseconds(300))
        #expect(changes.values.count == 2, "the same status published again changes nothing")
        changes.stop()
    }
}

/// Every value an observed expression took, as Observation reports it: the value now, then one
/// per change heard (`withObservationTracking`, tracked again after each change).
@MainActor
private final class Changes<Value: Sendable> {
    private(set) var values: [Value] = []
    private let read: @MainActor () -> Value
    private var stopped = false

    init(_ read: @escaping @MainActor () -> Value) {
        self.read = read
        follow()
    }

    private func follow() {
        guard !stopped else { return }
        let value = withObservationTracking { read() } onChange: { [weak self] in
            Task { @MainActor in self?.follow() }
        }
        values.append(value)
    }

    /// Waits (up to 10 s) until `count` values were seen.
    func wait(for count: Int) async throws {
        try await until { self.values.count >= count }
    }

    func stop() { stopped = true }
}

/// Waits (up to 10 s) until `condition` holds, on the main actor.
@MainActor
private func until(_ condition: @MainActor () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while ContinuousClock.now < deadline {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    throw TestFailure("the condition did not come to hold within 10 s")
}
