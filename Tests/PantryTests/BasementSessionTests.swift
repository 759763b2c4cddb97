import EventualKit
import Foundation
import Testing
@testable import Pantry

@Suite("The basement session", .timeLimit(.minutes(2)))
struct BasementSessionTests {
    @Test func offlineScansReachTheServerExactlyOnceAndASecondDeviceSeesThePantry() async throws {
        try await withLiveServer { server, scratch in
            // Given a product someone else created, and a user who signs in online and looks it up once
            let other = try await TestUser.register(on: server, name: "other")
            _ = try await seedProduct(Barcodes.milk, name: "Whole milk", server: server, as: other)
            let user = try await TestUser.register(on: server, name: "basement")
            let phone = scratch.folder("phone")
            let online = try await device(phone, server: server).login(email: user.email, password: user.password).pantry
            _ = try await online.knowledgeBase.lookup(Barcodes.milk)

            // When the server cannot be reached: three scans (one known, two new), a consume, a search
            let basement = try await device(phone, server: unreachableServer).open()
            let known = try await basement.knowledgeBase.lookup(Barcodes.milk)
            let milk = try await basement.buy(barcode: Barcodes.milk, candidates: known.candidates, choice: .pick(1),
                                              details: ItemDetails(quantity: 2, category: "dairy"))
            try await basement.buy(barcode: Barcodes.pasta, candidates: [], choice: .new(name: "Penne rigate", description: "500 g"),
                                   details: ItemDetails(category: "pasta", expiresOn: Day(iso: "2030-05-01")))
            try await basement.buy(barcode: Barcodes.coffee, candidates: [], choice: .new(name: "Espresso beans", description: nil))
            try await basement.items.consume(milk.item.id, quantity: 1)
            #expect(try basement.items.search("penne").map(\.name) == ["Penne rigate"])
            #expect(await basement.device.sync(.localBudget, pull: false).calls == 0)
            let waiting = try await basement.status()
            #expect(waiting.connectivity == .offline)
            #expect(waiting.pending == 7)  // 3 items + 1 consume + 1 vote + 2 new products

            // And the server is back and the user syncs
            let back = try await device(phone, server: server).open()
            let report = await back.device.sync()
            #expect(report.failure == nil)
            #expect(try await back.status().pending == 0)

            // Then the knowledge base holds the two new products and the vote, exactly once each
            #expect(try await serverProducts(Barcodes.pasta, server: server, as: user).map(\.name) == ["Penne rigate"])
            #expect(try await serverProducts(Barcodes.coffee, server: server, as: user).map(\.name) == ["Espresso beans"])
            #expect(try await serverProducts(Barcodes.milk, server: server, as: user).map { $0.score ?? 0 } == [1])
            // And syncing again sends nothing twice
            let again = await back.device.sync()
            #expect(again.sent == 0 && again.calls == 0)
            #expect(try await serverProducts(Barcodes.pasta, server: server, as: user).count == 1)

            // And a second device that signs in sees the same pantry
            let tablet = try await device(scratch.folder("tablet"), server: server).login(email: user.email, password: user.password).pantry
            let mine = try back.items.list().map { "\($0.name) ×\($0.quantity)" }.sorted()
            #expect(try tablet.items.list().map { "\($0.name) ×\($0.quantity)" }.sorted() == mine)
            #expect(mine == ["Espresso beans ×1.0", "Penne rigate ×1.0", "Whole milk ×1.0"])
            #expect(try tablet.items.search("penne").count == 1)
        }
    }

    @Test func editsOnOneDeviceReachTheOther() async throws {
        try await withLiveServer { server, scratch in
            let user = try await TestUser.register(on: server)
            let phone = try await device(scratch.folder("phone"), server: server).login(email: user.email, password: user.password).pantry
            let tablet = try await device(scratch.folder("tablet"), server: server).login(email: user.email, password: user.password).pantry
            // When the phone adds and the tablet syncs, then the tablet consumes and the phone syncs
            let bread = try await phone.items.add(ItemDetails(name: "Bread", quantity: 2))
            _ = await phone.device.sync()
            _ = await tablet.device.sync()
            try await tablet.items.consume(bread.id, quantity: 2)
            _ = await tablet.device.sync()
            _ = await phone.device.sync()
            // Then both agree the bread is finished
            #expect(try phone.items.item(bread.id).status == .consumed)
            #expect(try phone.items.list().isEmpty)
        }
    }
}
