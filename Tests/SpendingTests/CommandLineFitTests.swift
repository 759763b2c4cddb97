import EventualAPI
import EventualKit
@testable import EventualServer
import Foundation
import SQLKit
import Testing
@testable import Spending

@Suite("spendiq as a stranger types it: money, ids, files, positions, refusals, 80 columns", .timeLimit(.minutes(5)))
struct CommandLineFitTests {
    @Test(.tags(.endToEnd)) func malformedValuesAreUsageMistakesAndMoneyIsNeverGuessed() async throws {
        try await withLiveServer { server, scratch in
            let device = try await CommandLineTests.signedIn(server, scratch)
            #expect(try await device.run(["accounts", "add", "Cash", "--currency", "EUR"]).status == 0)
            #expect(try await device.run(["accounts", "add", "Bank", "--currency", "EUR"]).status == 0)
            let ambiguous = try await device.run(["add", "expense", "1.234", "--account", "Cash"])
            #expect(ambiguous.isOneLineError && ambiguous.status == 64, "\(ambiguous.stderr)")
            #expect(ambiguous.stderr == "spendiq: EUR has 2 decimals: did you mean 1.23 or 1234?\n")
            let tooMany = try await device.run(["add", "expense", "0.015", "--account", "Cash"])
            #expect(tooMany.status == 64 && tooMany.stderr.contains("EUR has 2 decimals, and '0.015' has 3"), "\(tooMany.stderr)")
            for arguments in [["transfer", "1.234", "--from", "Bank", "--to", "Cash"], ["limits", "set", "--weekly", "1.234"],
                              ["add", "expense", "3", "--account", "Cash", "--date", "2026-02-30"], ["delete", "9"],
                              ["add", "expense", "3", "--account", "Cash", "--at", "95,200"], ["retry", "12"], ["list", "--days", "0"],
                              ["offers", "--radius", "0"], ["accounts", "edit", "Cash", "--name", "  "], ["transfer", "1", "--from", "Cash", "--to", "cash"]] {
                let outcome = try await device.run(arguments)
                #expect(outcome.isOneLineError && outcome.status == 64, "\(arguments): \(outcome.stderr)")
            }
            // Nothing was recorded by any of them
            #expect(try #require(try await device.run(["list", "--json"]).json() as? [Any]).isEmpty)
            // Grouping that reads one way is taken
            let grouped = try await device.run(["add", "income", "1.234,56", "--account", "Cash"])
            #expect(grouped.status == 0 && grouped.stdout.hasPrefix("Recorded income EUR 1234.56"), "\(grouped.stderr)")
        }
    }

    @Test(.tags(.endToEnd)) func southernAndWesternPositionsAreTyped() async throws {
        try await withLiveServer { server, scratch in
            let device = try await CommandLineTests.signedIn(server, scratch)
            #expect(try await device.run(["accounts", "add", "Cash", "--currency", "AUD"]).status == 0)
            let added = try await device.run(["add", "expense", "3", "--account", "Cash", "--at", "-33.9,151.2"])
            #expect(added.status == 0, "\(added.stderr)")
            let located = try await device.run(["locate", "-33.9,151.2"])
            #expect(located.status == 0 && located.stdout.hasPrefix("Position kept: -33.9,151.2."), "\(located.stderr)")
            let near = try await device.run(["offers", "--near", "-33.9,-70.5"])
            #expect(near.status == 0 && near.stdout == "No offers within 1000 m.\n", "\(near.stderr)")
            let list = try #require(try await device.run(["list", "--json"]).json() as? [[String: Any]])
            #expect(list.count == 1)
        }
    }

    @Test(.tags(.endToEnd)) func exportWritesNothingItShouldNotAndStandardOutputOnDash() async throws {
        try await withLiveServer { server, scratch in
            let device = try await CommandLineTests.signedIn(server, scratch)
            #expect(try await device.run(["accounts", "add", "Cash", "--currency", "EUR"]).status == 0)
            #expect(try await device.run(["add", "expense", "12.50", "--account", "Cash", "--note", "lunch"]).status == 0)
            let piped = try await device.run(["export", "--csv", "-"])
            #expect(piped.status == 0 && piped.stdout.hasPrefix("id,date,account,kind,amount") && piped.stdout.contains(",Cash,expense,12.50,EUR,"))
            #expect(piped.stderr == "Exported 1 transaction(s).\n")
            let existing = scratch.url.appendingPathComponent("mine.csv")
            try "keep me".write(to: existing, atomically: true, encoding: .utf8)
            let refused = try await device.run(["export", "--csv", existing.path])
            #expect(refused.isOneLineError && refused.status == 1 && refused.stderr.contains("--force"), "\(refused.stderr)")
            #expect(try String(contentsOf: existing, encoding: .utf8) == "keep me")
            #expect(try await device.run(["export", "--csv", existing.path, "--force"]).status == 0)
            let device1 = try await device.run(["export", "--csv", "/dev/full", "--force"])
            #expect(device1.isOneLineError && device1.stderr.contains("not a regular file"), "\(device1.stderr)")
            // And the export comes back in as it was, on the same device: nothing twice
            let back = try await device.run(["import", "--csv", existing.path])
            let said = back.stdout.replacingOccurrences(of: "\n", with: " ")
            #expect(back.status == 0 && said.contains("as a SpendiQ export, amounts with a decimal point")
                    && said.contains("Imported 0 transaction(s); 1 already there"), "\(back.stdout) \(back.stderr)")
        }
    }

    @Test(.tags(.endToEnd)) func outputFitsEightyColumnsWhenPipedAndJSONKeysAreAlwaysThere() async throws {
        try await withLiveServer { server, scratch in
            let device = try await CommandLineTests.signedIn(server, scratch)
            #expect(try await device.run(["accounts", "add", "A very long account name for the household's shared groceries", "--currency", "EUR"]).status == 0)
            let note = String(repeating: "a long note about what this was ", count: 8)
            #expect(try await device.run(["add", "expense", "12.50", "--account", "A very long account name for the household's shared groceries",
                                          "--note", note, "--category", "food"]).status == 0)
            #expect(try await device.run(["locate", "43.7394,7.4278"]).status == 0)
            for (arguments, width) in [(["locate", "43.7394,7.4278"], 80), (["list"], 80), (["offers"], 80), (["accounts"], 80), (["dashboard"], 80), (["status"], 80),
                                       (["list"], 120), (["offers"], 50)] {
                let environment = width == 80 ? [:] : ["COLUMNS": "\(width)"]
                let outcome = try await device.run(arguments, environment: environment)
                #expect(outcome.status == 0, "\(arguments): \(outcome.stderr)")
                let widest = outcome.stdout.split(separator: "\n").map(\.count).max() ?? 0
                #expect(widest <= width, "\(arguments) at \(width): \(widest) columns\n\(outcome.stdout)")
            }
            let list = try await device.run(["list"])
            #expect(list.stdout.contains("…"))
            // Offers near the casino are more than 200: the list says so and how to see more
            let offers = try await device.run(["offers"])
            #expect(offers.stdout.contains("The 200 nearest of ") && offers.stdout.contains("--limit"), "\(offers.stdout.suffix(300))")
            let accounts = try #require(try await device.run(["accounts", "--json"]).json() as? [[String: Any]])
            #expect(accounts.first.map { $0.keys.contains("colour") && $0["colour"] is NSNull } == true)
            let status = try #require(try await device.run(["status", "--json"]).json() as? [String: Any])
            #expect(Set(status.keys) == ["connectivity", "pending", "failed", "lastSyncAt", "signOutsWaiting", "mustSignInAgain", "firstSync", "attachmentsWaiting", "entries"])
            let json = try #require(try await device.run(["offers", "--json"]).json() as? [String: Any])
            #expect(json["note"] is NSNull && json["total"] as? Int ?? 0 > 200 && (json["offers"] as? [Any])?.count == 200)
            let fetchedAt = try #require(json["fetchedAt"] as? String)
            #expect(fetchedAt.hasSuffix("Z") && fetchedAt.count == 20)
        }
    }

    @Test(.tags(.endToEnd)) func aSlowLinkGivenTimeIsNotCalledOffline() async throws {
        try await withLiveServer { server, scratch in
            let device = try await CommandLineTests.signedIn(server, scratch)
            #expect(try await device.run(["locate", "43.7394,7.4278"]).status == 0)
            // Given a list of offers saved a moment ago (young enough to be shown once the server answers)
            #expect(try await device.run(["offers", "--limit", "5", "--json"]).status == 0)
            // And a link on which every answer takes longer than the command's own 300 ms
            let proxy = try await FaultProxy.start(upstreamPort: try #require(server.port), seed: 18)
            proxy.mode = .flaky(latency: .milliseconds(400)...(.milliseconds(400)), resetProbability: 0)
            let slow = CommandProcess.spendiq(dataDirectory: device.dataDirectory, server: URL(string: "http://127.0.0.1:\(proxy.port)")!)
            // When the person gives it 20 s (SPENDIQ_ANSWER_TIMEOUT, as every run here does) and asks for offers
            let offers = try await slow.run(["offers", "--limit", "5", "--json"])
            await proxy.stop()
            // Then they are the server's, not "offline"
            let json = try #require(try? offers.json() as? [String: Any], "\(offers.stdout) \(offers.stderr)")
            #expect(json["note"] is NSNull && (json["offers"] as? [Any])?.count == 5, "\(json["note"] ?? "")")
        }
    }

    @Test(.tags(.endToEnd)) func aRefusedChangeFailsTheSyncAndCanBeRetriedOrDiscardedBeforeSigningOut() async throws {
        try await withLiveServer { server, scratch in
            let device = try await CommandLineTests.signedIn(server, scratch)
            #expect(try await device.run(["accounts", "add", "Cash", "--currency", "EUR"]).status == 0)
            // Given a change the server refuses (a note past its 500 characters, written around the checks)
            let spending = try await spendingDevice(device.dataDirectory, server: unreachableServer).open()
            try await spending.store.write { tx in
                _ = try tx.recordChange(SyncCollections.spendingTransactions, id: "refused-one",
                                        fields: ["note": .string(String(repeating: "x", count: 501))])
            }
            // When the person syncs, it does not say "Synced" and exits 1, saying how many and why
            let sync = try await device.run(["sync"])
            #expect(sync.isOneLineError && sync.status == 1, "\(sync.stdout) \(sync.stderr)")
            #expect(sync.stderr.contains("the server refused 1 change(s)") && sync.stderr.contains("note"), "\(sync.stderr)")
            // and what to do with it: failures and settle, not retry or discard
            let settle = "see `spendiq failures`, then `spendiq settle ID --keep-mine | --take-theirs | --discard`"
            #expect(sync.stderr.contains(settle) && !sync.stderr.contains("retry"), "\(sync.stderr)")
            let text = try await device.run(["status"], environment: ["COLUMNS": "80"])
            #expect(text.stdout.replacingOccurrences(of: "\n", with: " ").contains("The server refused 1 change(s): " + settle + "."), "\(text.stdout)")
            #expect(text.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 } && !text.stdout.contains("retry"), "\(text.stdout)")
            // Status lists it with its id; sign-out is refused and says what to do
            let status = try #require(try await device.run(["status", "--json"]).json() as? [String: Any])
            let entries = try #require(status["entries"] as? [[String: Any]])
            let failed = try #require(entries.first { $0["state"] as? String == "failed" })
            let shortID = try #require(failed["shortId"] as? String)
            #expect(shortID.count == 8 && failed["reason"] is String)
            let logout = try await device.run(["logout"])
            #expect(logout.isOneLineError && logout.stderr.contains("1 change(s) were refused by the server: " + settle)
                    && !logout.stderr.contains("retry"), "\(logout.stderr)")
            // Retry sends it again and says it was refused again (one line, status 1); discard drops
            // it; then sign-out works
            let retried = try await device.run(["retry", shortID])
            #expect(retried.isOneLineError && retried.status == 1 && retried.stderr.contains("refused the")
                    && retried.stderr.contains("again"), "\(retried.stdout) \(retried.stderr)")
            let discarded = try await device.run(["discard", shortID])
            #expect(discarded.status == 0 && discarded.stdout.hasPrefix("Dropped the refused change"), "\(discarded.stderr)")
            let gone = try #require(try await device.run(["status", "--json"]).json() as? [String: Any])
            #expect(gone["failed"] as? Int == 0)
            let out = try await device.run(["logout"])
            #expect(out.status == 0 && out.stdout.hasPrefix("Signed out"), "\(out.stderr)")
        }
    }

    @Test func whoamiAppliesTheSevenDayRule() async throws {
        try await withLiveServer { server, scratch in
            let user = try await SpendingUser.verified(on: server, scratch: scratch)
            let clock = TestClock()
            let folder = scratch.folder("phone")
            _ = try await spendingDevice(folder, server: server, clock: clock).login(email: user.email, password: user.password)
            #expect(try await spendingDevice(folder, server: unreachableServer, clock: clock).whoami()?.email == user.email)
            clock.advance(.seconds(8 * 86_400))
            let later = spendingDevice(folder, server: unreachableServer, clock: clock)
            await #expect(throws: SpendingError.wipedAfterOfflineAge(days: 7)) { try await later.whoami() }
            #expect(try await later.whoami() == nil)
        }
    }

    @Test func theServerClampsLastSeenAndPositionsFromTheFuture() async throws {
        try await withLiveServer { server, scratch in
            let user = try await SpendingUser.verified(on: server, scratch: scratch)
            let spending = try await spendingDevice(scratch.folder("phone"), server: server).login(email: user.email, password: user.password).spending
            let year: Int64 = 365 * 86_400_000
            let before = UnixMillis.now()
            guard case .noContent = try await spending.app.link.client.postLastSeen(body: .json(.init(at: before + year))) else {
                throw TestFailure("last-seen")
            }
            guard case .noContent = try await spending.app.link.client.postLocation(body: .json(.init(latitude: -33.9, longitude: 151.2, at: before + year))) else {
                throw TestFailure("location")
            }
            let after = UnixMillis.now()
            guard case .ok(let answer) = try await spending.app.link.client.getSpendingAccount() else { throw TestFailure("account") }
            let lastSeen = try #require(try answer.body.json.lastSeenAt)
            #expect(lastSeen >= before && lastSeen <= after)
            let database = try await serverDatabase(scratch)
            let at = try await SpendingStore(database: database).location(userID: spending.session.userID)?.at
            await database.close()
            #expect(at.map { $0 >= before && $0 <= after } == true)
            // and a later, true report still moves it forward
            _ = try await spending.app.link.client.postLastSeen(body: .json(.init(at: after + 1000)))
            guard case .ok(let again) = try await spending.app.link.client.getSpendingAccount() else { throw TestFailure("account") }
            #expect(try again.body.json.lastSeenAt == after + 1000)
        }
    }
}

@Suite("An offline sign-out reaches the server with the next command that does", .timeLimit(.minutes(3)))
struct RevocationTests {
    @Test func aTokenSignedOutOfflineIsRevokedByTheNextRegistration() async throws {
        try await withLiveServer { server, scratch in
            let user = try await SpendingUser.verified(on: server, scratch: scratch)
            let folder = scratch.folder("phone")
            let app = spendingDevice(folder, server: server)
            _ = try await app.login(email: user.email, password: user.password)
            let token = try #require(app.vault.accessToken)
            // Signed out offline: the token still works on the server
            let outcome = try await spendingDevice(folder, server: unreachableServer).logout()
            #expect(outcome.revocationQueued)
            let probe = ServerLink(serverURL: server, timeouts: .patient) { token }
            guard case .ok = try await probe.client.getMe() else { throw TestFailure("the token should still work") }
            // When the device next reaches the server, for someone else's registration
            _ = try await spendingDevice(folder, server: server).register(username: "other_\(UUID().uuidString.prefix(6))",
                                                                       email: "other.\(UUID().uuidString.prefix(6))@example.com", password: "long-password")
            // Then the old token is refused and nothing waits any more
            guard case .unauthorized = try await probe.client.getMe() else { throw TestFailure("the token should be revoked") }
            #expect(try spendingDevice(folder, server: server).vault.pendingRevocations().isEmpty)
        }
    }
}
