import EventualKit
import Foundation
import Testing
@testable import Spending

/// Issue 46, item 19: `spendiq accounts` said nothing of a rename that waits to be sent, and its
/// `--json` had no `syncState`, where transactions say both.
@Suite("SpendiQ: an account says what of it waits", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct AccountSyncStateTests {
    @Test func aRenameMadeOfflineIsMarkedUntilItIsSent() async throws {
        try await SharedAccountsTests.withServer(.sqlite) { server, folder in
            let (phone, _) = try await SharedAccountsTests.person("ann", server, folder)
            #expect(try await phone.run(["accounts", "add", "Cash", "--currency", "EUR"]).status == 0)
            #expect(try await phone.run(["sync"]).status == 0)
            // Given a rename made in a basement
            #expect(try await phone.run(["accounts", "edit", "Cash", "--name", "Wallet"], server: unreachableServer).status == 0)
            // Then the list marks it as waiting, and its JSON says so with its short id
            let table = try await phone.run(["accounts"], server: unreachableServer)
            #expect(table.status == 0 && table.stdout.contains("⋯") && table.stdout.contains("waits to be sent"), "\(table.stdout)")
            let waiting = try #require(try await SharedAccountsTests.json(phone, ["accounts"]).first)
            #expect((waiting["syncState"] as? [String: Any])?["state"] as? String == "pending", "\(waiting)")
            #expect(waiting["shortId"] as? String == (waiting["id"] as? String).map { String($0.suffix(8)) })
            // When it is sent
            #expect(try await phone.run(["sync"]).status == 0)
            // Then nothing is marked, and its state is the server's
            let synced = try await phone.run(["accounts"])
            #expect(!synced.stdout.contains("⋯") && synced.stdout.contains("Wallet"), "\(synced.stdout)")
            let confirmed = try #require(try await SharedAccountsTests.json(phone, ["accounts"]).first)
            #expect((confirmed["syncState"] as? [String: Any])?["state"] as? String == "confirmed", "\(confirmed)")
        }
    }
}
