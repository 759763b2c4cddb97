import EventualAPI
import Foundation
import Testing

/// Budgets set and removed through the built command (issue 46, item 11).
@Suite("spendiq limits set and remove", .timeLimit(.minutes(4)), .tags(.endToEnd))
struct LimitCommandTests {
    @Test func aLimitIsSentByItsOwnCommandAndRemovedByItsPeriodAlone() async throws {
        try await withLiveServer { server, scratch in
            // Given ann with a EUR account, online
            let ann = try await CommandLineTests.signedIn(server, scratch)
            #expect(try await ann.run(["accounts", "add", "Cash", "--currency", "EUR"]).status == 0)
            #expect(try await ann.run(["sync"]).status == 0)

            // When she sets a weekly food limit
            let set = try await ann.run(["limits", "set", "--weekly", "120", "--category", "food"])
            #expect(set.status == 0 && set.stdout.hasPrefix("Your weekly food limit is EUR 120.00."), "\(set.stdout)\(set.stderr)")
            // Then it is on the server at once, as every other write: nothing waits
            let status = try #require(try await ann.run(["status", "--json"]).json() as? [String: Any])
            #expect(status["pending"] as? Int == 0, "\(status)")

            // When she removes "weekly" without --category, the one weekly limit there is
            let removed = try await ann.run(["limits", "remove", "weekly"])
            // Then it goes, said by what it was
            #expect(removed.status == 0 && removed.stdout.hasPrefix("Removed the weekly limit on food (EUR 120.00)."), "\(removed.stdout)\(removed.stderr)")
            #expect(try await ann.run(["limits"]).stdout.contains("No limits"))

            // And with two, it names them instead of guessing
            for category in ["food", "fun"] { #expect(try await ann.run(["limits", "set", "--weekly", "50", "--category", category]).status == 0) }
            let which = try await ann.run(["limits", "remove", "weekly"])
            #expect(which.status == 1 && which.isOneLineError, "\(which.stderr)")
            #expect(which.stderr.contains("say which with --category food or --category fun"), "\(which.stderr)")
            let none = try await ann.run(["limits", "remove", "daily"])
            #expect(none.status == 1 && none.stderr.contains("No daily limit on all spending in EUR (there is none)"), "\(none.stderr)")
        }
    }
}
