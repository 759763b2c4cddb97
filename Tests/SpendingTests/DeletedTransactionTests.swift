import EventualAPI
import EventualKit
import EventualServer
import Foundation
import Testing
@testable import Spending

/// The rule (docs/spendiq.md): a deleted transaction stays deleted. An edit made offline on
/// another device, before or after the deletion, never brings it back in silence, whichever
/// device syncs first: reaching the server after the deletion it is refused, for its author to
/// settle (`--keep-mine` makes it again, whole); reaching it before, the deletion still wins.
@Suite("SpendiQ: a deleted transaction is not brought back by an edit, in either order", .timeLimit(.minutes(6)), .tags(.endToEnd))
struct DeletedTransactionTests {
    /// Ann and Ben sharing Home, with Ann's EUR 50 income in it, both devices synced. Returns its short id.
    private static func household(_ server: URL, _ folder: ScratchFolder) async throws -> (ann: CommandProcess, ben: CommandProcess, income: String) {
        let (ann, _) = try await SharedAccountsTests.person("ann", server, folder)
        let (ben, benName) = try await SharedAccountsTests.person("ben", server, folder)
        #expect(try await ann.run(["accounts", "add", "Home", "--currency", "EUR"]).status == 0)
        #expect(try await ann.run(["add", "income", "50", "--account", "Home", "--note", "refund"]).status == 0)
        #expect(try await ann.run(["accounts", "share", "Home", "--with", benName]).status == 0)
        let invitation = try await SharedAccountsTests.onlyInvitation(ben)
        #expect(try await ben.run(["accept", try #require(invitation["id"] as? String)]).status == 0)
        #expect(try await ben.run(["sync"]).status == 0)
        let listed = try await SharedAccountsTests.json(ben, ["list"])
        let id = try #require(listed.first?["id"] as? String)
        return (ann, ben, String(id.suffix(8)))
    }

    private static func balance(_ device: CommandProcess) async throws -> Int? {
        let accounts = try await SharedAccountsTests.json(device, ["accounts"])
        return accounts.first { $0["name"] as? String == "Home" }?["balanceMinor"] as? Int
    }

    @Test(arguments: Backend.available)
    func anEditThatReachesTheServerAfterTheDeletionIsRefusedAndKeepMineMakesItAgain(_ backend: Backend) async throws {
        try await SharedAccountsTests.withServer(backend) { server, folder in
            let (ann, ben, income) = try await Self.household(server, folder)
            // Given Ben deletes the income offline, and Ann edits its note offline a second later
            #expect(try await ben.run(["delete", income], server: unreachableServer).status == 0)
            try await Task.sleep(for: .milliseconds(1100))
            #expect(try await ann.run(["edit", income, "--note", "tax refund"], server: unreachableServer).status == 0)
            // When Ben syncs first, then Ann
            #expect(try await ben.run(["sync"]).status == 0)
            let annSync = try await ann.run(["sync"])
            // Then Ann's edit is refused, said, and listed with the server's words
            #expect(annSync.status == 1, "\(annSync.stdout)\(annSync.stderr)")
            let failures = try #require(try await ann.run(["failures", "--json"]).json() as? [[String: Any]])
            let refused = try #require(failures.first { $0["code"] as? String == "deleted" }, "\(failures)")
            #expect((refused["reason"] as? String ?? refused["message"] as? String ?? "").contains("deleted"), "\(refused)")
            // And the income is in nobody's balance
            #expect(try await Self.balance(ben) == 0)
            #expect(try await ben.run(["sync"]).status == 0)
            #expect(try await SharedAccountsTests.json(ben, ["list"]).isEmpty)

            // When Ann keeps hers, the income is made again, whole, with her note, for both
            let id = try #require(refused["id"] as? String)
            let kept = try await ann.run(["settle", String(id.suffix(8)), "--keep-mine"])
            #expect(kept.status == 0, "\(kept.stdout)\(kept.stderr)")
            #expect(try await ann.run(["sync"]).status == 0)
            #expect(try await ben.run(["sync"]).status == 0)
            for device in [ann, ben] {
                let listed = try await SharedAccountsTests.json(device, ["list"])
                #expect(listed.count == 1 && listed.first?["note"] as? String == "tax refund" && listed.first?["amountMinor"] as? Int == 5000,
                        "\(listed)")
                #expect(try await Self.balance(device) == 5000)
            }
        }
    }

    @Test(arguments: Backend.available)
    func anEditThatReachesTheServerBeforeTheDeletionIsDeletedWithIt(_ backend: Backend) async throws {
        try await SharedAccountsTests.withServer(backend) { server, folder in
            let (ann, ben, income) = try await Self.household(server, folder)
            // Given Ben deletes the income offline, and Ann edits its note offline a second later
            #expect(try await ben.run(["delete", income], server: unreachableServer).status == 0)
            try await Task.sleep(for: .milliseconds(1100))
            #expect(try await ann.run(["edit", income, "--note", "tax refund"], server: unreachableServer).status == 0)
            // When Ann syncs first, then Ben, then Ann again
            #expect(try await ann.run(["sync"]).status == 0)
            #expect(try await ben.run(["sync"]).status == 0)
            #expect(try await ann.run(["sync"]).status == 0)
            // Then the deletion wins on both devices: the income is in neither balance, nothing is refused
            for device in [ann, ben] {
                #expect(try await SharedAccountsTests.json(device, ["list"]).isEmpty)
                #expect(try await Self.balance(device) == 0)
                let failures = try #require(try await device.run(["failures", "--json"]).json() as? [[String: Any]])
                #expect(failures.isEmpty, "\(failures)")
            }
        }
    }
}
