import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

@Suite("Two devices use the last unit offline: the rule refuses one, the person settles it", .timeLimit(.minutes(3)))
struct LastUnitTests {
    /// Ann's phone and laptop, both holding `quantity` of milk, and each using some of it (or none) offline.
    func bothUse(_ server: URL, _ scratch: ScratchFolder, quantity: Double, phoneUses: Double, laptopUses: Double)
        async throws -> (phone: Device, laptop: Device, ann: Person, milk: String) {
        let ann = try await registerPerson(server, name: "ann")
        let phone = try await Device.of(ann, server: server, folder: scratch.url.appendingPathComponent("phone"))
        let laptop = try await Device.of(ann, server: server, folder: scratch.url.appendingPathComponent("laptop"))
        let milk = try await phone.put("Milk", quantity: quantity, in: nil)
        #expect(await phone.engine.syncNow().isComplete)
        #expect(await laptop.engine.syncNow().pulled == 1)
        if phoneUses > 0 { try await phone.use(milk, phoneUses) }
        if laptopUses > 0 { try await laptop.use(milk, laptopUses) }
        return (phone, laptop, ann, milk)
    }

    /// What a device that has never synced gets from the server.
    func serverQuantity(_ ann: Person, _ server: URL, _ scratch: ScratchFolder, _ name: String) async throws -> [Double] {
        let fresh = try await Device.of(ann, server: server, folder: scratch.url.appendingPathComponent(name))
        _ = await fresh.engine.syncNow()
        return try fresh.items().map(\.quantity)
    }

    @Test(arguments: Backend.available)
    func oneUseAppliesTheOtherIsRefusedWithTheRulesWordsAndTakingTheirsLeavesBothAtZero(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let (phone, laptop, ann, milk) = try await bothUse(server, scratch, quantity: 1, phoneUses: 1, laptopUses: 1)
            let live = LiveSnapshots(laptop)
            // When the phone syncs first, then the laptop
            #expect(await phone.engine.syncNow().isComplete)
            let report = await laptop.engine.syncNow()
            // Then the laptop's use is refused with the rule's code and sentence, and the server's record
            #expect(report.sent == 0 && report.rejected == 1)
            let failure = try #require(try laptop.engine.failures().first)
            #expect(failure.code == SyncRuleViolation.belowMinimum && failure.field == "quantity")
            #expect(failure.reason == "Only 0 left: quantity cannot go below 0 (it would be -1)")
            #expect(failure.serverRecord?.fields["quantity"]?.doubleValue == 0 && failure.deltas == ["quantity": -1])
            try await live.wait { $0.rows.first?.state == .failed(reason: failure.reason) }
            // When the person takes theirs
            let settled = try await laptop.engine.settle(failure.shortID, .takeTheirs)
            #expect(settled.restored)
            // Then both devices and the server hold 0, and nothing waits or is refused
            try await live.wait { $0.rows.first?.state == .confirmed && $0.rows.first?.row.quantity == 0 }
            _ = await phone.engine.syncNow()
            #expect(await laptop.engine.syncNow().isComplete)
            #expect(try phone.items().map(\.quantity) == [0] && laptop.items().map(\.quantity) == [0])
            #expect(try laptop.outbox.counts() == OutboxCounts() && phone.outbox.counts() == OutboxCounts())
            #expect(try await serverQuantity(ann, server, scratch, "fresh") == [0])
            #expect(try laptop.store.syncStates(SyncCollections.pantryItems, ids: [milk]) == [milk: .confirmed])
            await live.cancel()
        }
    }

    @Test(arguments: Backend.available)
    func aBatchWithOneChangeThatBreaksARuleHasItRefusedAndTheOthersApplied(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let (phone, laptop, ann, milk) = try await bothUse(server, scratch, quantity: 1, phoneUses: 1, laptopUses: 0)
            #expect(await phone.engine.syncNow().isComplete)
            // Given the laptop, not knowing the milk is gone, adds tea, uses the milk and adds bread, in one batch
            try await laptop.put("Tea", quantity: 1, in: nil)
            try await laptop.use(milk, 1)
            try await laptop.put("Bread", quantity: 2, in: nil)
            let report = await laptop.engine.syncNow()
            // Then only the use is refused, and the tea and the bread reach the server
            #expect(report.sent == 2 && report.rejected == 1)
            #expect(try laptop.engine.failures().map(\.recordID) == [milk])
            let fresh = try await Device.of(ann, server: server, folder: scratch.url.appendingPathComponent("fresh"))
            _ = await fresh.engine.syncNow()
            #expect(try fresh.items().map(\.name).sorted() == ["Bread", "Milk", "Tea"])
            #expect(try fresh.items().first { $0.name == "Milk" }?.quantity == 0)
        }
    }

    @Test(arguments: Backend.available)
    func keepingMineWithAnEditAppliesOnEveryDevice(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            // Two left: the phone uses both, the laptop one
            let (phone, laptop, ann, _) = try await bothUse(server, scratch, quantity: 2, phoneUses: 2, laptopUses: 1)
            #expect(await phone.engine.syncNow().isComplete)
            #expect(await laptop.engine.syncNow().rejected == 1)
            let failure = try #require(try laptop.engine.failures().first)
            // When the person keeps theirs, saying one is in fact left
            let settled = try await laptop.engine.settle(failure.id, .keepMine(edits: ["quantity": 1]))
            #expect(try settled.queued != nil && laptop.items().map(\.quantity) == [1])
            // Then it applies, and every device and the server hold 1: nothing lost, nothing doubled
            let sent = await laptop.engine.syncNow()
            #expect(sent.isComplete && sent.sent == 1)
            _ = await phone.engine.syncNow()
            #expect(try phone.items().map(\.quantity) == [1] && laptop.items().map(\.quantity) == [1])
            #expect(try await serverQuantity(ann, server, scratch, "fresh") == [1])
            #expect(try laptop.engine.failures().isEmpty && laptop.outbox.counts() == OutboxCounts())
            // And keeping an unedited use that still breaks the rule is refused again, never applied
            try await phone.use(try #require(try phone.items().first).id, 1)
            try await laptop.use(try #require(try laptop.items().first).id, 1)
            #expect(await phone.engine.syncNow().isComplete)
            #expect(await laptop.engine.syncNow().rejected == 1)
            try await laptop.engine.settle(try #require(try laptop.engine.failures().first).id, .keepMine())
            #expect(await laptop.engine.syncNow().rejected == 1)
            try await laptop.engine.settle(try #require(try laptop.engine.failures().first).id, .discard)
            _ = await laptop.engine.syncNow()
            #expect(try laptop.items().map(\.quantity) == [0] && phone.items().map(\.quantity) == [0])
            #expect(try await serverQuantity(ann, server, scratch, "fresh-2") == [0])
        }
    }
}
