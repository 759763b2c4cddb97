import EventualAPI
import Foundation
import Testing

/// A discard whose refusal did not say what the server holds (issue 46, items 9 and 10), through the built command.
@Suite("pantry settle --discard says what the item shows", .timeLimit(.minutes(5)), .tags(.endToEnd))
struct SettleDiscardWordsTests {
    @Test func aDiscardTheServerSaidNothingOfShowsTheServersVersionAndLeavesNoInnerWorkBehind() async throws {
        try await withLiveServer { server, scratch in
            // Given Bob, an editor of Ann's household with 2 milk, who sets it to 3 offline
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            let bob = try await PantryPerson.signUp("bob", server: server, scratch: scratch)
            try await household(ann: ann, bob: bob)
            try await ann.run(["add", "--name", "Milk", "--quantity", "2", "--household", "Home"])
            try await ann.run(["sync"])
            try await bob.run(["sync"])
            let milk = String(try await bob.itemID("Milk").suffix(8))
            try await bob.run(["edit", milk, "--quantity", "3"], server: unreachableServer)
            // And Ann makes him a viewer before he syncs: the server refuses the edit without saying what it holds
            #expect(try await ann.run(["household", "role", bob.username, "viewer", "--in", "Home"]).status == 0)
            #expect(try await bob.pantry.run(["sync"]).status == 1)
            let failures = try #require(try await bob.run(["failures", "--json"]).json() as? [[String: Any]])
            let id = try #require(failures.first?["shortId"] as? String, "\(failures)")

            // When he discards his edit, online
            let discarded = try await bob.run(["settle", id, "--discard"])

            // Then it says what the item shows: the server's version, fetched now, not his change
            let said = discarded.stdout.replacingOccurrences(of: "\n", with: " ")
            #expect(said.contains("Discarded your edit of Milk (quantity); this device now shows the server's version (2 left)."), "\(said)")
            #expect(try await bob.items().first?["quantity"] as? Double == 2)
            // And no fetch of the engine's own is left in the status, nor counted by the next sync as a contribution
            let status = try await bob.run(["status"])
            #expect(!status.stdout.contains("fetching") && status.stdout.contains("pending 0, failed 0"), "\(status.stdout)")
            let sync = try await bob.run(["sync"])
            #expect(sync.stdout.hasPrefix("Synced: sent 0 change(s) and 0 knowledge-base contribution(s)"), "\(sync.stdout)")
        }
    }
}
