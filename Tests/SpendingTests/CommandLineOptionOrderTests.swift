import Foundation
import Testing

/// Every option of `spendiq` before or after its subcommand's name, at every level, as a person
/// types them (`spendiq --json list` was refused).
@Suite("The spendiq command takes options before or after the subcommand", .tags(.endToEnd), .timeLimit(.minutes(3)))
struct CommandLineOptionOrderTests {
    @Test func jsonAndTheSubcommandsOwnOptionsWorkBeforeItsName() async throws {
        try await withLiveServer { server, scratch in
            // Given a signed-in device with an account and two expenses
            let device = try await CommandLineTests.signedIn(server, scratch)
            #expect(try await device.run(["accounts", "add", "Wallet", "--currency", "EUR"]).status == 0)
            #expect(try await device.run(["add", "expense", "3", "--account", "Wallet", "--category", "food"]).status == 0)
            #expect(try await device.run(["add", "expense", "4", "--account", "Wallet", "--category", "fun"]).status == 0)
            // When --json and --category come before, after or around `list`
            for arguments in [["list", "--json", "--category", "food"], ["--json", "list", "--category", "food"],
                              ["--json", "--category", "food", "list"], ["--category=food", "--json", "list"]] {
                let listed = try await device.run(arguments)
                // Then each is the same listing, in JSON
                #expect(listed.status == 0, "\(arguments): \(listed.stderr)")
                let rows = try #require(try listed.json() as? [[String: Any]], "\(arguments): \(listed.stdout)")
                #expect(rows.compactMap { $0["category"] as? String } == ["food"], "\(arguments)")
            }
            // And at the second level too: before `accounts`, between it and `list`, after `list`
            for arguments in [["--json", "accounts", "list"], ["accounts", "--json", "list"], ["accounts", "list", "--json"]] {
                let accounts = try await device.run(arguments)
                #expect(accounts.status == 0, "\(arguments): \(accounts.stderr)")
                #expect((try accounts.json() as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Wallet"], "\(arguments)")
            }
        }
    }
}
