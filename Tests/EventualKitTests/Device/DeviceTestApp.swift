import EventualAPI
import Foundation
import GRDB
import Synchronization
@testable import EventualKit

/// An app as the device layer sees it, on the test schema: items said by name, a call said by its operation.
func testApp(policy: AccountPolicy = AccountPolicy()) -> DeviceApp {
    DeviceApp(.pantry, version: "0.1", migrations: [itemsMigration], policy: policy) { entry, store in
        guard entry.kind == .change else { return "call \(entry.operation)" }
        let name = try store.reader.read { db in
            try String.fetchOne(db, sql: "SELECT name FROM items WHERE id = ?", arguments: [entry.recordID ?? ""])
        }
        return "item \(name ?? "?")"
    }
}

/// A device's configuration in `folder`, talking to `server`, with quick password checks and
/// patient deadlines and budgets (a machine busy with the whole suite answers slowly).
func testConfiguration(_ folder: URL, server: URL, clock: (@Sendable () -> Int64)? = nil, databaseName: String = "test.sqlite") -> DeviceConfiguration {
    var configuration = DeviceConfiguration(dataDirectory: folder, serverURL: server, databaseName: databaseName)
    configuration.passwordRounds = 100_000
    configuration.timeouts = .patient
    configuration.localCommandSyncBudget = .seconds(10)
    configuration.analyticsEnabled = false
    if let clock { configuration.clock = clock }
    return configuration
}

/// Adds an item as an app would: the row and its change in one transaction.
func addItem(_ name: String, to store: LocalStore) async throws {
    let id = UUIDv7.make()
    try await store.write { tx in
        try tx.db.execute(sql: "INSERT INTO items (id, name, quantity, boughtAt) VALUES (?, ?, 1, 0)", arguments: [id, name])
        try tx.recordChange(SyncCollections.pantryItems, id: id, fields: ["name": .string(name), "quantity": .number(1), "boughtAt": .integer(0)])
    }
}

/// A clock a test moves by hand (Unix milliseconds).
final class HandClock: Sendable {
    private let now = Mutex(UnixMillis.now())
    var function: @Sendable () -> Int64 { { self.now.withLock { $0 } } }
    func advance(days: Int64) { now.withLock { $0 += days * 86_400_000 } }
}
