import EventualAPI
import Foundation
import Testing

/// A person at the record quota with records in another app (issue 46, item 5), through the built commands.
@Suite("spendiq at the record quota", .timeLimit(.minutes(4)), .tags(.endToEnd))
struct QuotaWordsTests {
    @Test func aFirstAccountPastTheQuotaSaysThePantrysItemsCountToo() async throws {
        try await withLiveServer(configure: { $0.quotas.syncRecordsPerUser = 2 }) { server, scratch in
            // Given ben, whose 2 pantry items fill his quota
            let spendiq = try await CommandLineTests.signedIn(server, scratch)
            let email = try #require(try await spendiq.run(["whoami", "--json"]).json() as? [String: Any])["email"] as? String
            let pantry = CommandProcess.pantry(dataDirectory: scratch.folder("pantry"), server: server)
            #expect(try await pantry.run(["login", "--email", try #require(email), "--password-stdin"], input: "long-password\n").status == 0)
            for name in ["Eggs", "Milk"] { #expect(try await pantry.run(["add", "--name", name]).status == 0) }
            #expect(try await pantry.run(["sync"]).status == 0)

            // When he adds his first SpendiQ account
            let added = try await spendiq.run(["accounts", "add", "Cash", "--currency", "EUR"])
            let said = added.stdout.replacingOccurrences(of: "\n", with: " ")

            // Then it is said refused now, and that his records in every app count, the pantry's too
            #expect(added.status == 0 && said.contains("The server refused it: Quota reached"), "\(said)\(added.stderr)")
            #expect(said.contains("in every app you use") && said.contains("The pantry's items count too") && !said.contains("waits"), "\(said)")
        }
    }
}
