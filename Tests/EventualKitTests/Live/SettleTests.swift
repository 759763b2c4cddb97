import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

/// Settling a refused change on the device alone: the server's answers are written as the engine
/// records them, so each choice's local transaction is seen whole.
@Suite("Settling a refused change: take theirs, keep mine, discard")
struct SettleTests {
    let scratch: ScratchFolder
    let phone: Device

    init() throws {
        scratch = try ScratchFolder()
        phone = try Device(folder: scratch.url, serverURL: unreachableServer)
    }

    /// Milk, 1 on the server, used up here; the server refused the use as `code` with its `record`.
    func refusedUse(code: String?, record: SyncWire.PulledRecord?) async throws -> (milk: String, entry: String) {
        let milk = try await phone.put("Milk", quantity: 1, in: nil)
        try await phone.store.writer.write { db in try db.execute(sql: "DELETE FROM eventual_outbox") }   // the server has it
        try await phone.use(milk, 1)
        let entry = try #require(try phone.outbox.entries().first).id
        try await phone.store.writer.write { db in
            try OutboxTable.markFailed(id: entry, message: "Only 0 left: quantity cannot go below 0", code: code,
                                       field: code.map { _ in "quantity" }, serverRecord: try record.map { try JSONEncoder.sorted.encode($0) },
                                       db: db)
        }
        return (milk, entry)
    }

    func serverMilk(_ id: String, quantity: Double, name: String = "Milk", deleted: Bool = false) -> SyncWire.PulledRecord {
        SyncWire.PulledRecord(collection: "pantry_items", recordId: id, fields: [
            "name": .string(name), "quantity": .number(quantity), "status": "inPantry", "boughtAt": .integer(1_764_000_000_000),
        ], deleted: deleted, hlc: "1764000000000-00000-server", space: nil, changedBy: "bob")
    }

    func milk() throws -> Item? { try phone.items().first }

    @Test func aFailureSaysWhatTheServerSaidAndTakingTheirsWritesItsRecordAndDropsTheChange() async throws {
        defer { scratch.remove() }
        let (milk, entry) = try await refusedUse(code: "below_minimum", record: nil)
        // The server, meanwhile, holds 0 of "Milk (opened)" (a pull keeps its newest record beside the failure)
        try await phone.store.writer.write { db in
            try FailedChange.keep(RemoteRecord(collection: "pantry_items", recordID: milk, fields: ["name": "Milk (opened)", "quantity": 0],
                                               deleted: false, hlc: "1764000000001-00000-server"), db)
        }
        let failure = try #require(try phone.engine.failures().first)
        #expect(failure.id == entry && failure.recordID == milk && failure.deltas == ["quantity": -1] && failure.fields.isEmpty)
        #expect(failure.reason == "Only 0 left: quantity cannot go below 0" && failure.code == "below_minimum" && failure.field == "quantity")
        #expect(failure.serverRecord?.fields["name"] == "Milk (opened)")
        // When the person takes theirs, by the 8 characters lists show
        let settled = try await phone.engine.settle(failure.shortID, .takeTheirs)
        // Then the row is the server's, and only the ask for the server's newest version waits
        #expect(settled.restored && settled.queued == nil)
        #expect(try self.milk() == Item(id: milk, name: "Milk (opened)", quantity: 0, category: nil))
        #expect(try phone.outbox.entries().map(\.operation) == [RecordRefetch.operation])
        #expect(try phone.store.syncStates(SyncCollections.pantryItems, ids: [milk]) == [milk: .confirmed])
    }

    @Test func keepingMineWithAnEditSetsItOnTheRowAndQueuesItStampedAgain() async throws {
        defer { scratch.remove() }
        let (milk, entry) = try await refusedUse(code: "below_minimum", record: serverMilk("-", quantity: 0))
        let before = try JSONDecoder().decode(ChangePayload.self, from: try #require(try phone.outbox.entries().first).payload)
        // When the person keeps the use, as "none left"
        let settled = try await phone.engine.settle(entry, .keepMine(edits: ["quantity": 0]))
        // Then one change waits in its place: the quantity set, not added to, with a newer stamp
        let queued = try #require(try phone.outbox.entries().first)
        #expect(try phone.outbox.entries().count == 1 && queued.id == settled.queued && queued.id != entry && queued.state == .pending)
        let change = try JSONDecoder().decode(ChangePayload.self, from: queued.payload)
        #expect(change.fields == ["quantity": 0] && change.deltas == nil && change.deleted == false)
        #expect(try #require(HLCStamp(parsing: change.hlc)) > (try #require(HLCStamp(parsing: before.hlc))))
        #expect(try self.milk()?.quantity == 0)
        #expect(try phone.store.syncStates(SyncCollections.pantryItems, ids: [milk]) == [milk: .pending(count: 1)])
        #expect(try phone.engine.failures().isEmpty)
    }

    @Test func keepingMineUneditedQueuesTheSameUseAgain() async throws {
        defer { scratch.remove() }
        let (_, entry) = try await refusedUse(code: "below_minimum", record: nil)
        try await phone.engine.settle(entry, .keepMine())
        let change = try JSONDecoder().decode(ChangePayload.self, from: try #require(try phone.outbox.entries().first).payload)
        #expect(change.deltas == ["quantity": -1] && change.fields.isEmpty)
        #expect(try self.milk()?.quantity == 0)
    }

    @Test func discardingGoesBackToTheServersRecordOrRemovesOneItNeverHad() async throws {
        defer { scratch.remove() }
        let (milk, entry) = try await refusedUse(code: "below_minimum", record: nil)
        try await phone.store.writer.write { db in
            try db.execute(sql: "UPDATE eventual_outbox SET server_record = ? WHERE id = ?",
                           arguments: [try JSONEncoder.sorted.encode(serverMilk(milk, quantity: 1)), entry])
        }
        let settled = try await phone.engine.settle(entry, .discard)
        #expect(settled.restored && !settled.removed && !settled.neverOnServer)
        #expect(try self.milk()?.quantity == 1)
        // And a record the server never had (it refused its creation by a rule, and holds none) goes from the device
        try await phone.put("Tea", quantity: 1, in: nil)
        let created = try #require(try phone.outbox.entries().first { $0.kind == .change }).id
        try await phone.store.writer.write { db in
            try OutboxTable.markFailed(id: created, message: "Choose one of inPantry, consumed, thrownAway", code: "not_allowed",
                                       field: "status", db: db)
        }
        let gone = try await phone.engine.settle(created, .discard)
        #expect(gone.removed && gone.neverOnServer)
        #expect(try phone.items().map(\.id) == [milk])
        // (the milk's newest version is asked for; nothing is asked of a record the server never had)
        let waiting = try phone.outbox.entries()
        #expect(waiting.map(\.operation) == [RecordRefetch.operation], "\(waiting.map { ($0.kind, $0.operation, $0.state) })")
    }

    @Test func discardingARefusedCreationRemovesARecordTheServerNeverHad() async throws {
        defer { scratch.remove() }
        // Given a record made here whose creation was refused with no code (a viewer's, say)
        try await phone.put("Tea", quantity: 1, in: nil)
        try await phone.put("Coffee", quantity: 1, in: nil)
        let entries = try phone.outbox.entries().map(\.id)
        try await phone.store.writer.write { db in
            for entry in entries { try OutboxTable.markFailed(id: entry, message: "You are a viewer of Home", db: db) }
        }
        #expect(try phone.engine.failures().map(\.createsRecord) == [true, true])
        // When both are discarded, both go from the device (taking theirs still needs the server's word)
        await #expect(throws: SettleError.serverStateUnknown(String(entries[1].suffix(8)))) {
            try await phone.engine.settle(entries[1], .takeTheirs)
        }
        for entry in entries {
            let settled = try await phone.engine.settle(entry, .discard)
            #expect(settled.restored && settled.removed && settled.neverOnServer)
        }
        #expect(try phone.items().isEmpty && phone.outbox.entries().isEmpty)
    }

    @Test func aKeptCreationRefusedAgainIsStillOneTheServerNeverHad() async throws {
        defer { scratch.remove() }
        // Given a record made here whose creation was refused with no code (a viewer's, say)
        try await phone.put("Tea", quantity: 1, in: nil)
        let created = try #require(try phone.outbox.entries().first).id
        try await phone.store.writer.write { db in try OutboxTable.markFailed(id: created, message: "You are a viewer of Home", db: db) }
        // When the person keeps it, and the server refuses it again
        let kept = try #require(try await phone.engine.settle(created, .keepMine()).queued)
        try await phone.store.writer.write { db in try OutboxTable.markFailed(id: kept, message: "You are a viewer of Home", db: db) }
        // Then it still makes the record: discarding it removes the row the server never had
        #expect(try phone.engine.failures().map(\.createsRecord) == [true])
        let settled = try await phone.engine.settle(kept, .discard)
        #expect(settled.restored && settled.neverOnServer)
        #expect(try phone.items().isEmpty && phone.outbox.entries().isEmpty)
    }

    @Test func whenTheServerDidNotSayWhatItHoldsTakingTheirsIsRefusedAndDiscardingSaysSo() async throws {
        defer { scratch.remove() }
        let (milk, entry) = try await refusedUse(code: nil, record: nil)
        await #expect(throws: SettleError.serverStateUnknown(String(entry.suffix(8)))) {
            try await phone.engine.settle(entry, .takeTheirs)
        }
        #expect(try phone.engine.failures().count == 1)
        let settled = try await phone.engine.settle(entry, .discard)
        #expect(!settled.restored && !settled.removed && !settled.neverOnServer)
        #expect(try self.milk()?.id == milk)
        // (the row keeps the change until the server's version, asked for, comes)
        #expect(try phone.outbox.entries().map(\.operation) == [RecordRefetch.operation])
        // And a refused call is retried or discarded, never settled
        let call = try await phone.store.write { tx in try tx.enqueueCall("kb.post", payload: ["barcode": "1"]) }
        try await phone.store.writer.write { db in try OutboxTable.markFailed(id: call, message: "no", db: db) }
        await #expect(throws: SettleError.notAChange(String(call.suffix(8)))) { try await phone.engine.settle(call, .discard) }
    }
}
