import Foundation
import Testing
@testable import Pantry

/// Votes and new products through the `pantry` executable: `vote`, `scan --new` on a name the
/// knowledge base already has, and a new product from the pick prompt.
@Suite("Voting and creating products with the pantry command", .timeLimit(.minutes(2)), .tags(.endToEnd))
struct CommandLineVoteTests {
    @Test func voteByBarcodeReachesTheServerAndANewerRatingReplacesIt() async throws {
        try await withLiveServer { server, scratch in
            // Given a product someone else created
            let other = try await TestUser.register(on: server, name: "other")
            _ = try await seedProduct(Barcodes.milk, name: "Whole milk", server: server, as: other)
            let (pantry, _) = try await signedInProcess(server, scratch)
            // When the user rates it
            let voted = try await pantry.run(["vote", Barcodes.milk, "--rating", "3"])
            // Then the server has the rating (at once, or at the next sync on a busy machine)
            #expect(voted.status == 0, "\(voted.stderr)")
            #expect(voted.stdout.hasPrefix("Voted +3 for Whole milk (\(Barcodes.milk)).\n"))
            #expect(try await pantry.run(["sync"]).status == 0)
            #expect(try await serverProducts(Barcodes.milk, server: server, as: other).first?.score == 3)
            // And a negative rating, with the option first, replaces it
            #expect(try await pantry.run(["vote", "--rating", "-5", Barcodes.milk, "--pick", "1"]).status == 0)
            #expect(try await pantry.run(["sync"]).status == 0)
            #expect(try await serverProducts(Barcodes.milk, server: server, as: other).first?.score == -5)
            // And a pick beyond the candidates is one line
            let beyond = try await pantry.run(["vote", Barcodes.milk, "--rating", "1", "--pick", "2"])
            #expect(beyond.isOneLineError)
        }
    }

    @Test func voteOfflineByProductIdWaitsInTheOutboxUntilSync() async throws {
        try await withLiveServer { server, scratch in
            let other = try await TestUser.register(on: server, name: "other")
            let productID = try await seedProduct(Barcodes.coffee, name: "Espresso", server: server, as: other)
            let (pantry, _) = try await signedInProcess(server, scratch)
            #expect(try await pantry.run(["scan", Barcodes.coffee, "--pick", "1"]).status == 0)
            #expect(try await pantry.run(["sync"]).status == 0)
            // When the user votes in the basement, naming the product by its id
            let voted = try await pantry.run(["vote", productID, "--rating", "5"], server: unreachableServer)
            #expect(voted.status == 0, "\(voted.stderr)")
            #expect(voted.stdout.contains("your vote waits"))
            let status = try jsonObject(try await pantry.run(["status", "--json"], server: unreachableServer))
            #expect((status["entries"] as? [[String: Any]])?.map { $0["what"] as? String } == ["vote +5 on a product of \(Barcodes.coffee)"])
            // Then the sync sends it, replacing the +1 of the purchase
            let synced = try await pantry.run(["sync"])
            #expect(synced.stdout.contains("1 knowledge-base contribution(s)"), "\(synced.stderr)")
            #expect(try await serverProducts(Barcodes.coffee, server: server, as: other).first?.score == 5)
            // And an id this device never saw is one clear line
            let unknown = try await pantry.run(["vote", "no-such-product", "--rating", "1"])
            #expect(unknown.isOneLineError)
            #expect(unknown.stderr.contains("neither a barcode nor a product"))
        }
    }

    @Test func scanNewWithAnExistingNameVotesInsteadUnlessForced() async throws {
        try await withLiveServer { server, scratch in
            let other = try await TestUser.register(on: server, name: "other")
            _ = try await seedProduct(Barcodes.milk, name: "Whole milk", server: server, as: other)
            let (pantry, _) = try await signedInProcess(server, scratch)
            // When the user creates "whole MILK " for a barcode that has "Whole milk"
            let same = try await pantry.run(["scan", Barcodes.milk, "--new", "--name", " whole MILK "])
            // Then it is a vote for the existing product, not a second product
            #expect(same.status == 0, "\(same.stderr)")
            #expect(same.stdout.contains("voting for it instead"))
            #expect(try await pantry.run(["sync"]).status == 0)
            var products = try await serverProducts(Barcodes.milk, server: server, as: other)
            #expect(products.map(\.name) == ["Whole milk"])
            #expect(products.first?.score == 1)
            // And --force posts it anyway
            #expect(try await pantry.run(["scan", Barcodes.milk, "--new", "--name", "Whole milk", "--force"]).status == 0)
            #expect(try await pantry.run(["sync"]).status == 0)
            products = try await serverProducts(Barcodes.milk, server: server, as: other)
            #expect(products.count == 2)
        }
    }

    @Test func answeringNAtThePickPromptCreatesANewProduct() async throws {
        try await withLiveServer { server, scratch in
            let other = try await TestUser.register(on: server, name: "other")
            _ = try await seedProduct(Barcodes.milk, name: "Whole milk", server: server, as: other)
            let (pantry, _) = try await signedInProcess(server, scratch)
            // When the user scans on a terminal and answers n, then a name
            let scanned = try await pantry.run(["scan", Barcodes.milk], input: "n\nOat milk\n", onTerminal: true)
            // Then the new product is posted and the item carries its name
            #expect(scanned.status == 0, "\(scanned.stdout)")
            #expect(scanned.stdout.contains("or n for a new product"))
            #expect(scanned.stdout.contains("Added Oat milk"))
            #expect(try await pantry.run(["sync"]).status == 0)
            #expect(Set(try await serverProducts(Barcodes.milk, server: server, as: other).map(\.name)) == ["Whole milk", "Oat milk"])
            #expect(try jsonItems(try await pantry.run(["list", "--json"])).map { $0["name"] as? String } == ["Oat milk"])
        }
    }
}
