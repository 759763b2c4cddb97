import Foundation
import GRDB
import Synchronization
@testable import EventualKit

/// A live query of a device's items, as a screen would hold it: every snapshot it emitted, and
/// how many times it read the database.
final class LiveSnapshots: Sendable {
    private final class Seen: Sendable {
        let snapshots = Mutex<[LiveSnapshot<Item>]>([])
        let fetches = Atomic<Int>(0)
        /// What ended the query, if anything did.
        let ended = Mutex<String?>(nil)
    }
    private let seen = Seen()
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ device: Device) {
        let seen = self.seen
        let stream = device.store.observe(Device.items, id: \Item.id) { db in
            seen.fetches.add(1, ordering: .relaxed)
            return try Row.fetchAll(db, sql: "SELECT id, name, quantity, category FROM items ORDER BY name").map {
                Item(id: $0["id"], name: $0["name"], quantity: $0["quantity"], category: $0["category"])
            }
        }
        task.withLock {
            $0 = Task {
                do {
                    for try await snapshot in stream { seen.snapshots.withLock { $0.append(snapshot) } }
                    seen.ended.withLock { $0 = "the query ended" }
                } catch {
                    seen.ended.withLock { $0 = "the query failed: \(error)" }
                }
            }
        }
    }

    var all: [LiveSnapshot<Item>] { seen.snapshots.withLock { $0 } }
    /// How many times the query read the database.
    var fetches: Int { seen.fetches.load(ordering: .relaxed) }
    var count: Int { all.count }
    var latest: LiveSnapshot<Item>? { all.last }

    /// The states of the latest snapshot's rows, by item name.
    var states: [String: SyncState] {
        Dictionary(uniqueKeysWithValues: (latest?.rows ?? []).map { ($0.row.name, $0.state) })
    }

    /// Waits (up to 10 s) until the latest snapshot satisfies `condition`.
    func wait(until condition: (LiveSnapshot<Item>) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let latest, condition(latest) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("no snapshot came that satisfies the condition; the last: \(String(describing: latest))"
                          + (seen.ended.withLock { $0 }.map { "; \($0)" } ?? ""))
    }

    /// Lets the observation deliver anything still on its way.
    func letStragglersArrive() async throws {
        try await Task.sleep(for: .milliseconds(300))
    }

    func cancel() async {
        let running = task.withLock { $0 }
        running?.cancel()
        await running?.value
    }
}
