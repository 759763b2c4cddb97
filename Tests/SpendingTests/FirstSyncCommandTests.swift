import CommandLineSupport
import EventualAPI
import EventualKit
import Foundation
import Testing

@Suite("A first sync through the spendiq command: the last 30 days first, its progress in status", .timeLimit(.minutes(5)),
       .tags(.endToEnd))
struct FirstSyncCommandTests {
    @Test(arguments: Backend.available)
    func aSecondDeviceFetchesTheRecentMonthFirstThenTheRestAndStatusSaysSo(_ backend: Backend) async throws {
        try await SharedAccountsTests.withServer(backend) { server, folder in
            // Given Alice's account with two recent expenses and three from last year, on her phone
            let (phone, _) = try await SharedAccountsTests.person("alice", server, folder)
            #expect(try await phone.run(["accounts", "add", "Home", "--currency", "EUR"]).status == 0)
            let lastYear = Calendar(identifier: .gregorian).date(byAdding: .year, value: -1, to: Date())!
            let old = ISO8601DateFormatter.string(from: lastYear, timeZone: .current, formatOptions: [.withFullDate])
            for amount in ["10", "11"] {
                #expect(try await phone.run(["add", "expense", amount, "--account", "Home"]).status == 0)
            }
            for amount in ["20", "21", "22"] {
                let added = try await phone.run(["add", "expense", amount, "--account", "Home", "--date", old])
                #expect(added.status == 0, "\(added.stderr)")
            }
            #expect(try await phone.run(["sync"]).status == 0)
            let email = try #require((try await phone.run(["whoami", "--json"]).json() as? [String: Any])?["email"] as? String)

            // When she signs in on a laptop, which fetches her records (its first sync)
            let laptop = CommandProcess.spendiq(dataDirectory: folder.folder("laptop"), server: server)
            let login = try await laptop.run(["login", "--email", email, "--password-stdin"], input: "long-password\n")
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout.replacingOccurrences(of: "\n", with: " ").contains("Fetched 6 record(s): your other devices' and what is shared with you."), "\(login.stdout)")
            let synced = try await laptop.run(["sync"])
            #expect(synced.status == 0, "\(synced.stderr)")

            // Then both priorities came, the recent month (with the account) first, and nothing drew on a
            // stderr that is not a terminal
            let status = try #require(try await laptop.run(["status", "--json"]).json() as? [String: Any])
            let firstSync = try #require(status["firstSync"] as? [[String: Any]], "\(status)")
            #expect(firstSync.map { $0["priority"] as? Int } == [0, 1])
            #expect(firstSync.map { $0["received"] as? Int } == [3, 3], "account and 2 recent expenses, then 3 old ones: \(firstSync)")
            #expect(firstSync.allSatisfy { $0["complete"] as? Bool == true && $0["received"] as? Int == $0["total"] as? Int })
            #expect(!login.stderr.contains("First sync") && !synced.stderr.contains("First sync"), "\(login.stderr)")
            let after = try await laptop.run(["status"])
            #expect(!after.stdout.contains("first sync"), "\(after.stdout)")
            let listed = try await SharedAccountsTests.json(laptop, ["list"])
            #expect(listed.count == 5, "\(listed)")
            #expect(!(try await laptop.run(["dashboard"]).stdout.contains("still arriving")))

            // And while a first sync has still to bring records (its progress as a stopped one leaves it), the dashboard says so
            try await UnfinishedFirstSync.leave(in: folder.folder("laptop"), fromPriority: 1, received: 3, total: 6)
            let dashboard = try await laptop.run(["dashboard"], server: unreachableServer)
            #expect(dashboard.stdout.replacingOccurrences(of: "\n", with: " ")
                .contains("Your records are still arriving (6 of 9 records): the figures below may be short"), "\(dashboard.stdout)")
        }
    }

    @Test(arguments: Backend.available)
    func balancesAndTheDashboardSayTheRecordsAreStillArrivingInTextAndJSON(_ backend: Backend) async throws {
        try await SharedAccountsTests.withServer(backend) { server, folder in
            // Given Alice's bank account with three expenses, and her laptop, whose first sync brought them all
            let (phone, _) = try await SharedAccountsTests.person("alice", server, folder)
            #expect(try await phone.run(["accounts", "add", "Bank", "--currency", "EUR", "--kind", "bank"]).status == 0)
            for amount in ["10", "11", "12"] {
                #expect(try await phone.run(["add", "expense", amount, "--account", "Bank"]).status == 0)
            }
            #expect(try await phone.run(["sync"]).status == 0)
            let email = try #require((try await phone.run(["whoami", "--json"]).json() as? [String: Any])?["email"] as? String)
            let laptop = CommandProcess.spendiq(dataDirectory: folder.folder("laptop"), server: server)
            #expect(try await laptop.run(["login", "--email", email, "--password-stdin"], input: "long-password\n").status == 0)
            let accounts = try await SharedAccountsTests.json(laptop, ["accounts"])
            #expect(!accounts.isEmpty && accounts.allSatisfy { $0["incomplete"] as? Bool == false }, "\(accounts)")
            let complete = try #require(try await laptop.run(["dashboard", "--json"], server: unreachableServer).json() as? [String: Any])
            #expect(complete["incomplete"] as? Bool == false && complete["arriving"] is NSNull, "\(complete)")
            #expect(!(try await laptop.run(["accounts"], server: unreachableServer).stdout.contains("still arriving")))

            // When its first sync had stopped while the older records arrived
            try await UnfinishedFirstSync.leave(in: folder.folder("laptop"), fromPriority: 1, received: 1, total: 3)

            let status = try #require(try await laptop.run(["status", "--json"], server: unreachableServer).json() as? [String: Any])
            let progress = try #require(status["firstSync"] as? [[String: Any]], "\(status)")
            let received = progress.compactMap { $0["received"] as? Int }.reduce(0, +), total = progress.compactMap { $0["total"] as? Int }.reduce(0, +)
            #expect(received < total, "\(progress)")

            // Then the balances say the records are still arriving, as the dashboard does, in the same words
            let sentence = "Your records are still arriving (\(received) of \(total) records): the figures below may be short until `spendiq sync` has brought the rest."
            for view in [["accounts"], ["accounts", "list"], ["dashboard"]] {
                let shown = try await laptop.run(view, server: unreachableServer)
                #expect(shown.status == 0 && shown.stdout.replacingOccurrences(of: "\n", with: " ").contains(sentence), "\(view): \(shown.stdout)")
            }
            // And in JSON: each balance, and the dashboard with how many came
            let short = try #require(try await laptop.run(["accounts", "--json"], server: unreachableServer).json() as? [[String: Any]])
            #expect(!short.isEmpty && short.allSatisfy { $0["incomplete"] as? Bool == true }, "\(short)")
            let dashboard = try #require(try await laptop.run(["dashboard", "--json"], server: unreachableServer).json() as? [String: Any])
            #expect(dashboard["incomplete"] as? Bool == true, "\(dashboard)")
            let arriving = try #require(dashboard["arriving"] as? [String: Any], "\(dashboard)")
            #expect(arriving["received"] as? Int == received && arriving["total"] as? Int == total, "\(arriving)")
        }
    }

    @Test func theBarFits80ColumnsAndSaysWhatCameOfWhat() throws {
        let running = [PullProgress(priority: 0, received: 1_200, total: 1_200, isComplete: true),
                       PullProgress(priority: 1, received: 10_000, total: 98_800)]
        let line = try #require(FirstSyncBar.line(running, readyNote: "the last 30 days are in", width: 80))
        #expect(line.count <= 79, "\(line)")
        #expect(line.hasPrefix("First sync ["))
        #expect(line.contains("11%  11,200 of 100,000 records, the last 30 days are in"), "\(line)")
        #expect(FirstSyncBar.line(running, width: 40).map { $0.count <= 39 } == true)
        // No bar once done, nor before a count
        #expect(FirstSyncBar.line(running.map { var done = $0; done.isComplete = true; return done }, width: 80) == nil)
        #expect(FirstSyncBar.line([PullProgress(priority: 0)], width: 80) == nil)
    }

    private static let words = DeviceWords(command: "spendiq", entries: "changes", one: "change(s)", many: "change(s)")

    @Test func statusSaysWhetherAFirstSyncRunsOrStopped() {
        let progress = [PullProgress(priority: 0, received: 3_000, total: 12_000, updatedAt: 1_000_000)]
        let status = DeviceStatus(connectivity: .online, pending: 0, failed: 0, entries: [], lastSyncAt: nil, pendingRevocations: 0,
                                  firstSync: progress)
        #expect(Self.words.firstSync(status, now: 1_004_000) == "first sync 3,000 of 12,000 records (25%), running")
        #expect(Self.words.firstSync(status, now: 1_060_000)
            == "first sync 3,000 of 12,000 records (25%), stopped; `spendiq sync` goes on from there")
    }
}
