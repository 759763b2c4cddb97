import Foundation
import Testing
@testable import Pantry

/// A change the server refused never blocks the device for good: the person sees it with an id,
/// retries or discards that one, and sign-out tells refused changes from waiting ones.
@Suite("Refused changes: retry, discard, and sign-out", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct RefusedChangesTests {
    @Test func oneRefusedChangeIsRetriedOrDiscardedAndSignOutTellsItFromWaitingOnes() async throws {
        try await withLiveServer { server, scratch in
            // Given a vote the server refuses (its product was deleted), and an item added offline
            let other = try await TestUser.register(on: server, name: "other")
            let productID = try await seedProduct(Barcodes.milk, name: "Whole milk", server: server, as: other)
            let user = try await TestUser.register(on: server)
            let folder = scratch.folder("phone")
            let online = try await device(folder, server: server).login(email: user.email, password: user.password).pantry
            let lookup = try await online.knowledgeBase.lookup(Barcodes.milk)
            try await deleteProduct(productID, server: server, as: other)
            try await online.buy(barcode: Barcodes.milk, candidates: lookup.candidates, choice: .pick(1))
            _ = await online.device.sync()
            let pantry = CommandProcess.pantry(dataDirectory: folder, server: server)
            #expect(try await pantry.run(["add", "--name", "Jam"], server: unreachableServer).status == 0)

            // When the person looks at the status
            let status = try await pantry.run(["status"], server: unreachableServer)
            let refusedRow = try #require(status.stdout.split(separator: "\n").first { $0.hasPrefix("failed") }, "\(status.stdout)")
            let entry = String(refusedRow.split(separator: " ", omittingEmptySubsequences: true)[1])
            // Then the refused change has an id to act on, and the waiting one is told apart
            #expect(entry.count == 8)
            #expect(status.stdout.contains("\npending ") && status.stdout.contains("pantry retry ID"), "\(status.stdout)")
            // (a vote is no change of a record: settle does not take it, so nothing sends the person there)
            #expect(!status.stdout.contains("settle"), "\(status.stdout)")

            // When they sign out offline, with or without dropping the refused change
            let logout = try await pantry.run(["logout"], server: unreachableServer)
            #expect(logout.isOneLineError && logout.stderr.contains("1 change(s) still wait to be sent")
                    && logout.stderr.contains("1 change(s) were refused by the server: see `pantry status`, then `pantry retry ID`")
                    && !logout.stderr.contains("settle"), "\(logout.stderr)")
            let dropRefused = try await pantry.run(["logout", "--discard-refused"], server: unreachableServer)
            #expect(dropRefused.isOneLineError && dropRefused.stderr.contains("still wait to be sent"), "\(dropRefused.stderr)")
            #expect(try await pantry.run(["whoami"], server: unreachableServer).status == 0)

            // When they retry the refused change, it waits again and the server refuses it again
            #expect(try await pantry.run(["retry", String(entry.prefix(3))]).status == 64)
            let retried = try await pantry.run(["retry", entry], server: unreachableServer)
            #expect(retried.status == 0 && retried.stdout.contains("sent again"), "\(retried.stderr)")
            #expect(try jsonObject(try await pantry.run(["status", "--json"], server: unreachableServer))["failed"] as? Int == 0)
            _ = try await pantry.run(["sync"])
            #expect(try jsonObject(try await pantry.run(["status", "--json"]))["failed"] as? Int == 1)
            // And retried online, it is refused again at once: said in one line, status 1, still listed
            let refusedAgain = try await pantry.run(["retry", entry])
            #expect(refusedAgain.isOneLineError && refusedAgain.status == 1 && refusedAgain.stderr.contains("again")
                    && refusedAgain.stderr.contains("`pantry failures` lists it"), "\(refusedAgain.stdout) \(refusedAgain.stderr)")
            #expect(try jsonObject(try await pantry.run(["status", "--json"]))["failed"] as? Int == 1)

            // And once the waiting item is sent, sign-out drops only the refused change, and says so
            let out = try await pantry.run(["logout", "--discard-refused"])
            #expect(out.status == 0 && out.stdout.contains("1 change(s) the server refused were dropped"), "\(out.stdout) \(out.stderr)")
            #expect(!out.stdout.contains("waiting"))
            #expect(try await pantry.run(["whoami"]).status == 1)
        }
    }

    @Test func discardingOneRefusedChangeLeavesTheOthers() async throws {
        try await withLiveServer { server, scratch in
            // Given two refused votes
            let other = try await TestUser.register(on: server, name: "other")
            let milk = try await seedProduct(Barcodes.milk, name: "Whole milk", server: server, as: other)
            let user = try await TestUser.register(on: server)
            let folder = scratch.folder("phone")
            let online = try await device(folder, server: server).login(email: user.email, password: user.password).pantry
            let lookup = try await online.knowledgeBase.lookup(Barcodes.milk)
            try await deleteProduct(milk, server: server, as: other)
            try await online.vote(barcode: Barcodes.milk, productId: milk, rating: 2)
            _ = await online.device.sync()
            try await online.buy(barcode: Barcodes.milk, candidates: lookup.candidates, choice: .pick(1))
            _ = await online.device.sync()
            let pantry = CommandProcess.pantry(dataDirectory: folder, server: server)
            let entries = try #require(try jsonObject(try await pantry.run(["status", "--json"]))["entries"] as? [[String: Any]])
            let refused = entries.filter { $0["state"] as? String == "failed" }.compactMap { $0["id"] as? String }
            #expect(refused.count == 2, "\(entries)")
            // When one is discarded by the id the status shows
            let discarded = try await pantry.run(["discard", String(try #require(refused.first).suffix(8))])
            #expect(discarded.status == 0 && discarded.stdout.contains("Dropped the refused change"), "\(discarded.stderr)")
            // Then the other is still there, and discarding it twice says there is no such change
            let left = try #require(try jsonObject(try await pantry.run(["status", "--json"]))["entries"] as? [[String: Any]])
            #expect(left.compactMap { $0["id"] as? String } == [refused[1]])
            let again = try await pantry.run(["discard", String(refused[0].suffix(8))])
            #expect(again.isOneLineError && again.stderr.contains("No refused change"), "\(again.stderr)")
        }
    }
}
