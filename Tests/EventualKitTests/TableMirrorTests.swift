import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

@Suite("TableMirror: a person's changes and the server's, in the app's table")
struct TableMirrorTests {
    let store: LocalStore
    let mirror = TableMirror(SyncCollections.pantryItems, table: "items")

    init() throws {
        store = try LocalStore(writer: DatabaseQueue(), migrations: [itemsMigration])
    }

    func row(_ id: String) throws -> Row? {
        try store.reader.read { db in try Row.fetchOne(db, sql: "SELECT * FROM items WHERE id = ?", arguments: [id]) }
    }

    func changes() throws -> [(recordID: String?, change: ChangePayload)] {
        try Outbox(store: store).entries().map { ($0.recordID, try JSONDecoder().decode(ChangePayload.self, from: $0.payload)) }
    }

    // MARK: - Both or neither

    @Test func anInsertWritesTheRowAndQueuesItsChange() async throws {
        try await store.write { tx in try mirror.insert("a", ["name": "Milk", "quantity": 2, "status": "inPantry"], in: tx) }
        let saved = try #require(try row("a"))
        #expect(saved["name"] as String == "Milk" && saved["quantity"] as Double == 2)
        let queued = try changes()
        #expect(queued.count == 1 && queued[0].recordID == "a")
        #expect(queued[0].change.fields == ["name": "Milk", "quantity": 2, "status": "inPantry"])
        #expect(queued[0].change.deleted == false)
    }

    @Test func aRowTheTableRefusesLeavesNoOutboxEntry() async throws {
        // When the table refuses the row (`name` is NOT NULL), after the change was queued
        await #expect(throws: DatabaseError.self) {
            try await store.write { tx in try mirror.insert("a", ["name": nil, "quantity": 1], in: tx) }
        }
        // Then neither the row nor the entry exists
        #expect(try row("a") == nil)
        #expect(try changes().isEmpty)
    }

    @Test func aChangeTheCollectionRefusesLeavesTheRowAsItWas() async throws {
        try await store.write { tx in try mirror.insert("a", ["name": "Milk", "quantity": 2], in: tx) }
        // When a write adds to a field that is not a counter, or sets one the collection lacks
        await #expect(throws: LocalStoreError.notACounter(collection: "pantry_items", field: "boughtAt")) {
            try await store.write { tx in try mirror.update("a", setting: ["name": "Oat milk"], adding: ["boughtAt": 5], in: tx) }
        }
        await #expect(throws: LocalStoreError.unknownField(collection: "pantry_items", field: "colour")) {
            try await store.write { tx in try mirror.update("a", setting: ["colour": "red"], in: tx) }
        }
        // Then the row is unchanged and only the insert waits
        #expect(try row("a")?["name"] as String? == "Milk")
        #expect(try changes().count == 1)
    }

    @Test func aTransactionThatFailsAfterTheMirrorWroteKeepsNothing() async throws {
        await #expect(throws: TestFailure.self) {
            try await store.write { tx in
                try mirror.insert("a", ["name": "Milk"], in: tx)
                try mirror.update("a", adding: ["quantity": 1], in: tx)
                throw TestFailure("the app failed half-way")
            }
        }
        #expect(try row("a") == nil)
        #expect(try changes().isEmpty)
    }

    // MARK: - Nulls

    @Test func aNewRecordsNullsAreWrittenButNotSent() async throws {
        try await store.write { tx in try mirror.insert("a", ["name": "Milk", "category": nil, "unit": "l"], in: tx) }
        #expect(try row("a")?["category"] as String? == nil)
        #expect(try changes()[0].change.fields == ["name": "Milk", "unit": "l"])
    }

    @Test func aNullInAnUpdateClearsTheFieldHereAndOnTheServer() async throws {
        try await store.write { tx in
            try mirror.insert("a", ["name": "Milk", "category": "dairy"], in: tx)
            try mirror.update("a", setting: ["category": nil], in: tx)
        }
        #expect(try row("a")?["category"] as String? == nil)
        #expect(try changes()[1].change.fields == ["category": .null])
    }

    @Test func aNullFromTheServerClearsTheField() async throws {
        try await store.write { tx in try mirror.insert("a", ["name": "Milk", "category": "dairy"], in: tx) }
        try await store.writer.write { db in
            try mirror.apply(remote("a", ["category": nil]), pending: PendingEdits(), in: db)
        }
        #expect(try row("a")?["category"] as String? == nil)
        #expect(try row("a")?["name"] as String? == "Milk")
    }

    // MARK: - What the server would refuse

    @Test func aChangeTheServerWouldRefuseIsRefusedBeforeAnythingIsWrittenOrQueued() async throws {
        // Given a record on the device
        try await store.write { tx in try mirror.insert("a", ["name": "Milk", "quantity": 2], in: tx) }
        // When a write carries what the server would refuse its whole push for (a control character, a number no record holds)
        let refused: [(String, @Sendable (LocalTransaction) throws -> Void)] = [
            ("name of a pantry_items record must not contain a NUL byte", { tx in try mirror.insert("b", ["name": "Oat\u{0}milk"], in: tx) }),
            ("the record id of a pantry_items record must not contain a tab", { tx in try mirror.insert("b\tc", ["name": "Oat"], in: tx) }),
            ("description of a pantry_items record must not contain an escape character",
             { tx in try mirror.update("a", setting: ["description": "\u{1B}[31mred"], in: tx) }),
            ("the amount added to quantity of a pantry_items record must be a finite number from -9007199254740991 to 9007199254740991, not 1e+17",
             { tx in try mirror.update("missing", adding: ["quantity": 1e17], in: tx) }),
            ("boughtAt of a pantry_items record must be a finite number from -9007199254740991 to 9007199254740991, not 9.223372036854776e+18",
             { tx in try mirror.update("missing", setting: ["boughtAt": .integer(.max)], in: tx) }),
        ]
        for (words, write) in refused {
            // Then it is refused with one line saying what, and nothing is written or queued
            await #expect { try await store.write(write) } throws: { error in
                (error as? LocalStoreError)?.description == words
            }
        }
        #expect(try row("a")?["name"] as String? == "Milk" && row("a")?["quantity"] as Double? == 2)
        #expect(try row("b") == nil)
        #expect(try changes().count == 1)
        // While a tab and line breaks in a text are text, and go
        try await store.write { tx in try mirror.update("a", setting: ["description": "two\n\tlines"], in: tx) }
        #expect(try changes().count == 2)
    }

    // MARK: - Counters

    @Test func amountsAddedToACounterAddUpInTheRowAndTravelAsDeltas() async throws {
        try await store.write { tx in try mirror.insert("a", ["name": "Eggs", "quantity": 6], in: tx) }
        try await store.write { tx in try mirror.update("a", setting: ["touchedAt": 1], adding: ["quantity": -2], in: tx) }
        try await store.write { tx in try mirror.update("a", adding: ["quantity": -1.5], in: tx) }
        #expect(try row("a")?["quantity"] as Double? == 2.5)
        let queued = try changes()
        #expect(queued[1].change.deltas == ["quantity": -2] && queued[1].change.fields == ["touchedAt": 1])
        #expect(queued[2].change.deltas == ["quantity": -1.5] && queued[2].change.fields.isEmpty)
    }

    @Test func aCounterIsSetOrAddedToNotBothInOneChange() async throws {
        try await store.write { tx in try mirror.insert("a", ["name": "Eggs", "quantity": 6], in: tx) }
        await #expect(throws: TableMirror.Refusal.setAndAdded(field: "quantity")) {
            try await store.write { tx in try mirror.update("a", setting: ["quantity": 0], adding: ["quantity": -1], in: tx) }
        }
        #expect(try row("a")?["quantity"] as Double? == 6)
        #expect(try changes().count == 1)
    }

    @Test func theServersCounterShowsWithTheAmountsNotSentYet() async throws {
        var edits = PendingEdits()
        edits.deltas = ["quantity": -2]
        edits.fields = ["name"]
        try await store.writer.write { [pending = edits] db in
            try mirror.apply(remote("a", ["name": "Theirs", "quantity": 10, "status": "inPantry"]), pending: pending, in: db)
        }
        // The record was new here: inserted with what the server says, the pending name held back
        let saved = try #require(try row("a"))
        #expect(saved["quantity"] as Double == 8)
        #expect(saved["name"] as String == "")
    }

    // MARK: - Deletes

    @Test func aDeleteRemovesTheRowAndQueuesATombstoneOnlyWhenThereWasARow() async throws {
        try await store.write { tx in try mirror.insert("a", ["name": "Milk"], in: tx) }
        #expect(try await store.write { tx in try mirror.delete("a", in: tx) })
        #expect(try await store.write { tx in try mirror.delete("a", in: tx) } == false)
        #expect(try row("a") == nil)
        let queued = try changes()
        #expect(queued.count == 2 && queued[1].change.deleted && queued[1].recordID == "a")
    }

    // MARK: - Statements

    @Test func writesWithTheSameFieldsPrepareOneStatement() async throws {
        // When 20 records with the same fields are inserted and updated in one transaction
        let prepared = try await store.write { tx in
            for index in 0..<20 {
                try mirror.insert("r\(index)", ["name": .string("Item \(index)"), "quantity": 1], in: tx)
                try mirror.update("r\(index)", setting: ["name": "Renamed"], adding: ["quantity": 1], in: tx)
            }
            // NB: `sqlite_stmt` lists the statements still prepared on this connection: a cached one
            // stays prepared, any other is finalized after it runs.
            return try String.fetchAll(tx.db, sql: """
                SELECT sql FROM sqlite_stmt WHERE sql LIKE 'INSERT INTO "items"%' OR sql LIKE 'UPDATE "items"%'
                """)
        }
        // Then one INSERT and one UPDATE are prepared, and kept for the next write
        #expect(prepared.count == 2, "\(prepared)")
        #expect(try row("r19")?["quantity"] as Double? == 2)
    }

    func remote(_ id: String, _ fields: [String: SyncValue]) -> RemoteRecord {
        RemoteRecord(collection: "pantry_items", recordID: id, fields: fields, deleted: false, hlc: "1764000000000-00000-server")
    }
}
