import EventualAPI
import EventualKit
import Foundation
import Testing
@testable import Pantry

/// The pantry's usage events the server filed, oldest first.
private func filedEvents(_ scratch: ScratchFolder) async throws -> [FiledEventRow] {
    try await scratch.filedEvents().filter { $0.app == "pantry" }
}

@Suite("Pantry: usage events", .timeLimit(.minutes(3)))
struct PantryAnalyticsTests {
    @Test func signInScansAndContributionsAreRecordedAndReachTheServer() async throws {
        try await withLiveServer { server, scratch in
            let other = try await TestUser.register(on: server, name: "other")
            _ = try await seedProduct(Barcodes.milk, name: "Whole milk", server: server, as: other)
            let user = try await TestUser.register(on: server)
            let pantry = try await device(scratch.folder("phone"), server: server).login(email: user.email, password: user.password).pantry
            // A known product picked, an unknown one posted, a vote
            let milk = try await pantry.knowledgeBase.lookup(Barcodes.milk)
            try await pantry.buy(barcode: Barcodes.milk, candidates: milk.candidates, choice: .pick(1))
            _ = try await pantry.knowledgeBase.lookup(Barcodes.pasta)
            try await pantry.buy(barcode: Barcodes.pasta, candidates: [], choice: .new(name: "Penne", description: nil))
            try await pantry.vote(barcode: Barcodes.milk, productId: try #require(milk.candidates.first?.id), rating: 4)
            let report = await pantry.engine.syncNow()
            #expect(report.failure == nil)
            #expect(try pantry.analytics.counts() == AnalyticsCounts())
            let events = try await filedEvents(scratch)
            #expect(events.map(\.name) == ["login", "product_scanned", "product_voted", "product_scanned", "product_posted", "product_voted"])
            #expect(events.filter { $0.name == "product_scanned" }.map(\.properties) == [#"{"result":"known"}"#, #"{"result":"unknown"}"#])
            #expect(events.filter { $0.name == "product_voted" }.map(\.properties) == [#"{"rating":1}"#, #"{"rating":4}"#])
        }
    }

    @Test func aScanInTheBasementIsRecordedAsOfflineAndSentLater() async throws {
        try await withLiveServer { server, scratch in
            let user = try await TestUser.register(on: server)
            let folder = scratch.folder("phone")
            _ = try await device(folder, server: server).login(email: user.email, password: user.password)
            // In the basement, a barcode never looked up before
            let basement = try await device(folder, server: unreachableServer).open()
            await #expect(throws: PantryError.self) { try await basement.knowledgeBase.lookup(Barcodes.coffee) }
            #expect(try basement.analytics.counts().waiting == 1)
            // Back upstairs
            let upstairs = try await device(folder, server: server).open()
            #expect(await upstairs.engine.syncNow().failure == nil)
            #expect(try await filedEvents(scratch).map(\.properties).contains(#"{"result":"offline"}"#))
        }
    }

    @Test func withAnalyticsOffNothingIsRecordedOrSent() async throws {
        try await withLiveServer { server, scratch in
            let user = try await TestUser.register(on: server)
            var configuration = device(scratch.folder("phone"), server: server).configuration
            configuration.analyticsEnabled = false
            let pantry = try await PantryApp(configuration: configuration).login(email: user.email, password: user.password).pantry
            _ = try await pantry.knowledgeBase.lookup(Barcodes.pasta)
            try await pantry.buy(barcode: Barcodes.pasta, candidates: [], choice: .new(name: "Penne", description: nil))
            #expect(await pantry.engine.syncNow().failure == nil)
            #expect(try pantry.analytics.counts() == AnalyticsCounts())
            #expect(try await filedEvents(scratch).isEmpty)
        }
    }

    @Test(.tags(.endToEnd)) func theCommandTakesNoAnalyticsAnywhere() async throws {
        try await withLiveServer { server, scratch in
            let (pantry, _) = try await signedInProcess(server, scratch)
            let before = try await filedEvents(scratch).count
            let first = try await pantry.run(["--no-analytics", "scan", Barcodes.pasta, "--new", "--name", "Penne"])
            #expect(first.status == 0, "\(first.stderr)")
            let second = try await pantry.run(["scan", Barcodes.pasta, "--pick", "1", "--no-analytics"])
            #expect(second.status == 0, "\(second.stderr)")
            let quiet = try await pantry.run(["sync", "--no-analytics"])
            #expect(quiet.status == 0, "\(quiet.stderr)")
            #expect(try await filedEvents(scratch).count == before)
            // Without the flag the scan is counted
            let counted = try await pantry.run(["scan", Barcodes.pasta, "--pick", "1"])
            #expect(counted.status == 0, "\(counted.stderr)")
            let synced = try await pantry.run(["sync"])
            #expect(synced.status == 0, "\(synced.stderr)")
            let names = try await filedEvents(scratch).map(\.name)
            #expect(names.suffix(2) == ["product_scanned", "product_voted"], "\(names)")
        }
    }
}
