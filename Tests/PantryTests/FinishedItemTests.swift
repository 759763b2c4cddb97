import EventualAPI
import EventualKit
import Foundation
import Testing
@testable import Pantry

/// The rule (docs/pantry.md): an item consumed or thrown away takes no edit until it is brought
/// back. An edit made on a device that had not heard of it is refused, for its author to settle,
/// never merged into an item nobody lists; whichever device syncs first, both end the same.
@Suite("Pantry: an edit of an item thrown away meanwhile is refused, never lost", .timeLimit(.minutes(4)), .tags(.endToEnd))
struct FinishedItemTests {
    /// One person's phone and tablet, with Milk (2) on both.
    private static func twoDevices(_ server: URL, _ scratch: ScratchFolder) async throws -> (phone: UserPantry, tablet: UserPantry, milk: String) {
        let user = try await TestUser.register(on: server)
        let phone = try await device(scratch.folder("phone"), server: server).login(email: user.email, password: user.password).pantry
        let tablet = try await device(scratch.folder("tablet"), server: server).login(email: user.email, password: user.password).pantry
        let milk = try await phone.items.add(ItemDetails(name: "Milk", quantity: 2))
        _ = await phone.device.sync()
        _ = await tablet.device.sync()
        try #require(try tablet.items.item(milk.id).status == .inPantry)
        return (phone, tablet, milk.id)
    }

    @Test(arguments: Backend.available)
    func anEditThatReachesTheServerAfterTheThrowAwayIsRefusedAndKeepMineBringsItBack(_ backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let (phone, tablet, milk) = try await Self.twoDevices(server, scratch)
            // Given the phone throws the milk away, and the tablet (not told yet) says 5 are left, then a use of 1
            try await phone.items.remove(milk)
            try await tablet.items.edit(milk, ItemDetails(quantity: 5))
            try await tablet.items.consume(milk, quantity: 1)
            // When the phone syncs first, then the tablet
            _ = await phone.device.sync()
            let report = await tablet.device.sync()
            // Then both changes of the tablet are refused, with the rule's words, not merged out of sight
            #expect(report.rejected == 2, "\(report)")
            let failures = try tablet.failures()
            #expect(failures.map(\.code) == [SyncRuleViolation.setAside, SyncRuleViolation.setAside], "\(failures.map(\.reason))")
            #expect(failures.first?.reason.contains("thrownAway") == true, "\(failures.first?.reason ?? "")")
            #expect(try phone.items.item(milk).status == .thrownAway)
            // And a device refuses such an edit itself, with the way back
            await #expect(throws: PantryError.finishedItem("Milk", id: milk)) { try await phone.items.edit(milk, ItemDetails(quantity: 1)) }

            // When the tablet keeps the first and drops the second
            try await tablet.settle(failures[0].id, .keepMine())
            try await tablet.settle(failures[1].id, .discard)
            _ = await tablet.device.sync()
            _ = await phone.device.sync()
            // Then the milk is back in the pantry with 5, on both, no longer finished
            for pantry in [phone, tablet] {
                let item = try pantry.items.item(milk)
                #expect(item.status == .inPantry && item.quantity == 5 && item.finishedAt == nil, "\(item)")
                #expect(try pantry.items.list().map(\.id) == [milk])
                #expect(try pantry.failures().isEmpty)
            }
        }
    }

    @Test(arguments: Backend.available)
    func anEditThatReachesTheServerFirstIsThrownAwayWithTheItem(_ backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let (phone, tablet, milk) = try await Self.twoDevices(server, scratch)
            // Given the same two changes offline
            try await phone.items.remove(milk)
            try await tablet.items.edit(milk, ItemDetails(quantity: 5))
            // When the tablet syncs first, then the phone, then the tablet again
            _ = await tablet.device.sync()
            let phoneReport = await phone.device.sync()
            _ = await tablet.device.sync()
            // Then nothing is refused, and both list it among what left the pantry, with the edit in it
            #expect(phoneReport.rejected == 0)
            for pantry in [phone, tablet] {
                #expect(try pantry.failures().isEmpty)
                #expect(try pantry.items.list().isEmpty)
                let finished = try pantry.items.list(ItemQuery(finished: true))
                #expect(finished.map(\.id) == [milk] && finished.first?.status == .thrownAway && finished.first?.quantity == 5)
            }
            // And restoring it brings it back for both
            try await phone.items.restore(milk, quantity: 3)
            _ = await phone.device.sync()
            _ = await tablet.device.sync()
            for pantry in [phone, tablet] {
                let item = try pantry.items.item(milk)
                #expect(item.status == .inPantry && item.quantity == 3 && item.finishedAt == nil, "\(item)")
            }
            await #expect(throws: PantryError.alreadyInPantry("Milk")) { try await phone.items.restore(milk) }
        }
    }
}
