import EventualKit
import Foundation
import Testing
@testable import Pantry

@Suite("Scanning: look-ups, picks, votes and new products, online and offline", .timeLimit(.minutes(2)))
struct ScanTests {
    @Test func onlinePickVotesAndPutsTheItemInThePantry() async throws {
        try await withLiveServer { server, scratch in
            // Given a product another user created
            let other = try await TestUser.register(on: server, name: "other")
            let productID = try await seedProduct(Barcodes.milk, name: "Whole milk", server: server, as: other)
            let user = try await TestUser.register(on: server)
            let pantry = try await device(scratch.folder("phone"), server: server).login(email: user.email, password: user.password).pantry
            // When the user scans it and picks it
            let lookup = try await pantry.knowledgeBase.lookup(Barcodes.milk)
            #expect(lookup.source == .network)
            #expect(lookup.candidates.map(\.name) == ["Whole milk"])
            let purchase = try await pantry.buy(barcode: Barcodes.milk, candidates: lookup.candidates, choice: .pick(1),
                                                details: ItemDetails(quantity: 2, expiresOn: Day(iso: "2030-01-01")))
            let report = await pantry.device.sync(.localBudget, pull: false)
            // Then the item is in the pantry with the product's name, and the vote reached the server
            #expect(purchase.item.name == "Whole milk")
            #expect(purchase.item.productId == productID)
            #expect(report.calls == 1)
            #expect(try pantry.items.list().map(\.name) == ["Whole milk"])
            #expect(try await serverProducts(Barcodes.milk, server: server, as: user).first?.score == 1)
        }
    }

    @Test func downvoteOthersRatesEveryOtherCandidateMinusOne() async throws {
        try await withLiveServer { server, scratch in
            let other = try await TestUser.register(on: server, name: "other")
            _ = try await seedProduct(Barcodes.coffee, name: "Espresso", server: server, as: other)
            _ = try await seedProduct(Barcodes.coffee, name: "Wrong name", server: server, as: other)
            let user = try await TestUser.register(on: server)
            let pantry = try await device(scratch.folder("phone"), server: server).login(email: user.email, password: user.password).pantry
            let lookup = try await pantry.knowledgeBase.lookup(Barcodes.coffee)
            let pick = try #require(lookup.candidates.firstIndex { $0.name == "Espresso" }) + 1
            let purchase = try await pantry.buy(barcode: Barcodes.coffee, candidates: lookup.candidates, choice: .pick(pick, downvoteOthers: true))
            #expect(purchase.votes == 2)
            #expect(await pantry.device.sync(.localBudget, pull: false).calls == 2)
            let scores = Dictionary(uniqueKeysWithValues: try await serverProducts(Barcodes.coffee, server: server, as: user).map { ($0.name, $0.score ?? 0) })
            #expect(scores == ["Espresso": 1, "Wrong name": -1])
        }
    }

    @Test func onlineNewProductIsPostedOnce() async throws {
        try await withLiveServer { server, scratch in
            let user = try await TestUser.register(on: server)
            let pantry = try await device(scratch.folder("phone"), server: server).login(email: user.email, password: user.password).pantry
            let lookup = try await pantry.knowledgeBase.lookup(Barcodes.pasta)
            #expect(lookup.candidates.isEmpty)
            try await pantry.buy(barcode: Barcodes.pasta, candidates: [], choice: .new(name: "Penne", description: "500 g"))
            #expect(await pantry.device.sync(.localBudget, pull: false).calls == 1)
            #expect(try await serverProducts(Barcodes.pasta, server: server, as: user).map(\.name) == ["Penne"])
            // And a second scan finds it once: the server's copy, not also the local one
            #expect(try await pantry.knowledgeBase.lookup(Barcodes.pasta).candidates.map(\.name) == ["Penne"])
        }
    }

    @Test func offlineLookupUsesTheSavedCopy() async throws {
        try await withLiveServer { server, scratch in
            let other = try await TestUser.register(on: server, name: "other")
            _ = try await seedProduct(Barcodes.milk, name: "Whole milk", server: server, as: other)
            let user = try await TestUser.register(on: server)
            let folder = scratch.folder("phone")
            let online = try await device(folder, server: server).login(email: user.email, password: user.password).pantry
            _ = try await online.knowledgeBase.lookup(Barcodes.milk)
            // When the server cannot be reached
            let offline = try await device(folder, server: unreachableServer).open()
            let lookup = try await offline.knowledgeBase.lookup(Barcodes.milk)
            // Then the saved copy answers
            #expect(lookup.source == .cache)
            #expect(lookup.candidates.map(\.name) == ["Whole milk"])
        }
    }

    @Test func offlineLookupOfAnUnknownBarcodeSaysWhatToDo() async throws {
        try await withLiveServer { server, scratch in
            let user = try await TestUser.register(on: server)
            let folder = scratch.folder("phone")
            _ = try await device(folder, server: server).login(email: user.email, password: user.password)
            let offline = try await device(folder, server: unreachableServer).open()
            await #expect(throws: PantryError.noSavedCopy(barcode: "5000112548167")) {
                try await offline.knowledgeBase.lookup(Barcodes.coffee)
            }
        }
    }

    @Test func productCreatedOfflineCanBeScannedAgainOffline() async throws {
        try await withLiveServer { server, scratch in
            let user = try await TestUser.register(on: server)
            let folder = scratch.folder("phone")
            _ = try await device(folder, server: server).login(email: user.email, password: user.password)
            let offline = try await device(folder, server: unreachableServer).open()
            // Given a product created in the basement
            try await offline.buy(barcode: Barcodes.pasta, candidates: [], choice: .new(name: "Fusilli", description: nil))
            // When it is scanned again, still offline
            let lookup = try await offline.knowledgeBase.lookup(Barcodes.pasta)
            // Then the user's own product is a candidate, marked as not sent yet
            #expect(lookup.candidates.map(\.name) == ["Fusilli"])
            #expect(lookup.candidates.first?.isPending == true)
            try await offline.buy(barcode: Barcodes.pasta, candidates: lookup.candidates, choice: .pick(1))
            #expect(try offline.items.list().count == 2)
        }
    }

    @Test func invalidBarcodeIsRefusedWithoutTheNetwork() async throws {
        try await withLiveServer { server, scratch in
            let user = try await TestUser.register(on: server)
            let pantry = try await device(scratch.folder("phone"), server: server).login(email: user.email, password: user.password).pantry
            await #expect(throws: PantryError.invalidBarcode("8001234567890")) { try await pantry.knowledgeBase.lookup("8001234567890") }
        }
    }

    @Test func voteTheServerRefusesIsShownAsFailedWithItsReason() async throws {
        try await withLiveServer { server, scratch in
            // Given a product the user looked up, then picked in the basement
            let other = try await TestUser.register(on: server, name: "other")
            let productID = try await seedProduct(Barcodes.milk, name: "Whole milk", server: server, as: other)
            let user = try await TestUser.register(on: server)
            let folder = scratch.folder("phone")
            let online = try await device(folder, server: server).login(email: user.email, password: user.password).pantry
            _ = try await online.knowledgeBase.lookup(Barcodes.milk)
            let basement = try await device(folder, server: unreachableServer).open()
            let lookup = try await basement.knowledgeBase.lookup(Barcodes.milk)
            try await basement.buy(barcode: Barcodes.milk, candidates: lookup.candidates, choice: .pick(1))
            // And meanwhile its creator deleted it
            try await deleteProduct(productID, server: server, as: other)
            // When the user syncs
            let back = try await device(folder, server: server).open()
            let report = await back.device.sync()
            // Then the item reached the server, and the vote is failed with the server's reason
            #expect(report.sent == 1)
            #expect(report.rejected == 1)
            let status = try await back.status()
            #expect(status.failed == 1)
            #expect(status.entries.first?.summary == "vote +1 on a product of \(Barcodes.milk)")
            #expect(status.entries.first?.lastError?.isEmpty == false)
        }
    }

    @Test func voteIsQueuedAndANewerRatingReplacesAnUnsentOne() async throws {
        try await withLiveServer { server, scratch in
            // Given a product of the knowledge base, and a user signed in once
            let other = try await TestUser.register(on: server, name: "other")
            let productID = try await seedProduct(Barcodes.milk, name: "Whole milk", server: server, as: other)
            let user = try await TestUser.register(on: server)
            let folder = scratch.folder("phone")
            _ = try await device(folder, server: server).login(email: user.email, password: user.password)
            // When the user rates it twice in the basement
            let basement = try await device(folder, server: unreachableServer).open()
            try await basement.vote(barcode: Barcodes.milk, productId: productID, rating: -3)
            try await basement.vote(barcode: Barcodes.milk, productId: productID, rating: 4)
            // Then one vote waits, the newer one, and it is what the server hears
            #expect(try await basement.status().entries.map(\.summary) == ["vote +4 on a product of \(Barcodes.milk)"])
            #expect(try await device(folder, server: server).open().device.sync().calls == 1)
            #expect(try await serverProducts(Barcodes.milk, server: server, as: user).first?.score == 4)
            // And a rating beyond -5...5 is refused before it is queued
            await #expect(throws: PantryError.invalidRating(6)) {
                try await basement.vote(barcode: Barcodes.milk, productId: productID, rating: 6)
            }
            // And the device knows the product's barcode from nothing but its id only once it was bought or created
            #expect(try basement.knowledgeBase.barcode(ofProduct: productID) == nil)
            let online = try await device(folder, server: server).open()
            try await online.buy(barcode: Barcodes.milk, candidates: try await online.knowledgeBase.lookup(Barcodes.milk).candidates,
                                 choice: .pick(1))
            #expect(try basement.knowledgeBase.barcode(ofProduct: productID)?.shortForm == Barcodes.milk)
        }
    }

    @Test func absurdPickIsRefusedNotTrapped() async throws {
        try await withLiveServer { server, scratch in
            let user = try await TestUser.register(on: server)
            let pantry = try await device(scratch.folder("phone"), server: server).login(email: user.email, password: user.password).pantry
            let candidate = ProductCandidate(id: "p", localId: nil, name: "Penne", description: nil, score: 0, isMine: false)
            for pick in [Int.min, 0, 2] {
                await #expect(throws: PantryError.pickOutOfRange(pick, count: 1)) {
                    try await pantry.buy(barcode: Barcodes.pasta, candidates: [candidate], choice: .pick(pick))
                }
            }
        }
    }
}
