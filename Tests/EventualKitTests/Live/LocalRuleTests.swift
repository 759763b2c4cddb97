import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

@Suite("The device checks a collection's rules before a write, with the server's words")
struct LocalRuleTests {
    let store: LocalStore
    let items = TableMirror(SyncCollections.pantryItems, table: "items")
    let accounts = TableMirror(SyncCollections.spendingAccounts, table: "accounts")
    let transactions = TableMirror(SyncCollections.spendingTransactions, table: "transactions")

    init() throws {
        let ledger = LocalMigration("test-ledger") { db in
            try db.execute(sql: """
                CREATE TABLE accounts (id TEXT PRIMARY KEY, name TEXT, kind TEXT, currency TEXT, space_id TEXT, changed_by TEXT);
                CREATE TABLE transactions (id TEXT PRIMARY KEY, accountId TEXT, toAccountId TEXT, kind TEXT, amountMinor INTEGER,
                                           currency TEXT, space_id TEXT, changed_by TEXT);
                """)
        }
        store = try LocalStore(writer: DatabaseQueue(), migrations: [itemsMigration, ledger])
        store.register([items, accounts, transactions])
    }

    func entries() throws -> Int { try Outbox(store: store).entries().count }

    @Test func usingMoreThanIsLeftIsRefusedAtOnceAndNothingIsQueued() async throws {
        try await store.write { tx in try items.insert("milk", ["name": "Milk", "quantity": 1, "status": "inPantry"], in: tx) }
        try await store.write { tx in _ = try items.update("milk", adding: ["quantity": -1], in: tx) }
        // When the last unit is gone and the person uses one more, offline
        let words = SyncCollections.pantryItems.violation(merged: ["quantity": -1], previous: ["quantity": 0]) { _, _ in nil }
        let expected = try #require(words)
        await #expect(throws: TableMirror.Refusal.rule(expected)) {
            try await store.write { tx in _ = try items.update("milk", adding: ["quantity": -1], in: tx) }
        }
        #expect(expected.code == "below_minimum" && expected.message.hasPrefix("Only 0 left"))
        // Then the row is as it was and only the first two changes wait
        #expect(try await store.reader.read { db in try Double.fetchOne(db, sql: "SELECT quantity FROM items") } == 0)
        #expect(try entries() == 2)
        // And setting it, or a status of the closed set, is checked too
        await #expect(throws: TableMirror.Refusal.self) {
            try await store.write { tx in _ = try items.update("milk", setting: ["status": "eaten"], in: tx) }
        }
        try await store.write { tx in _ = try items.update("milk", setting: ["quantity": 3, "status": "consumed"], in: tx) }
        #expect(try entries() == 3)
    }

    @Test func aTransactionMustNameAnAccountOnThisDeviceInItsCurrency() async throws {
        try await store.write { tx in try accounts.insert("wallet", ["name": "Wallet", "kind": "cash", "currency": "EUR"], in: tx) }
        let spent: [String: SyncValue] = ["kind": "expense", "amountMinor": 250, "currency": "EUR"]
        // A missing account, and one in another currency, are refused
        await #expect(throws: TableMirror.Refusal.self) {
            try await store.write { tx in try transactions.insert("t1", spent.merging(["accountId": "nowhere"]) { $1 }, in: tx) }
        }
        do {
            try await store.write { tx in
                try transactions.insert("t1", spent.merging(["accountId": "wallet", "currency": "USD"]) { $1 }, in: tx)
            }
            Issue.record("a transaction in USD on a EUR account was written")
        } catch TableMirror.Refusal.rule(let violation) {
            #expect(violation.code == "mismatched_reference" && violation.field == "accountId")
        }
        #expect(try entries() == 1)
        // And the account it names, in its currency, is taken
        try await store.write { tx in try transactions.insert("t1", spent.merging(["accountId": "wallet"]) { $1 }, in: tx) }
        #expect(try entries() == 2)
    }
}
