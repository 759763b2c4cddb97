import EventualAPI
import EventualKit
import Foundation
import Spending
import Testing

@Suite("spendiq shows what waits and what was refused, and settles it, on SQLite and PostgreSQL", .timeLimit(.minutes(6)), .tags(.endToEnd))
struct SyncStateCommandTests {
    static func states(_ device: CommandProcess, server: URL? = nil) async throws -> [String: [String: Any]] {
        let listed = try await device.run(["list", "--json"], server: server)
        #expect(listed.status == 0, "\(listed.stderr)")
        let rows = try #require(try listed.json() as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: rows.map { ($0["note"] as? String ?? "", $0["syncState"] as? [String: Any] ?? [:]) })
    }

    @Test(arguments: Backend.available)
    func listMarksWaitingAndRefusedRowsAndEachRefusalIsSettled(_ backend: Backend) async throws {
        try await SharedAccountsTests.withServer(backend) { server, folder in
            // Given Alice's account shared with Bob as an editor, and one of his own
            let (alice, _) = try await SharedAccountsTests.person("alice", server, folder)
            let (bob, bobName) = try await SharedAccountsTests.person("bob", server, folder)
            #expect(try await alice.run(["accounts", "add", "Trip", "--currency", "EUR"]).status == 0)
            #expect(try await alice.run(["accounts", "share", "Trip", "--with", bobName]).status == 0)
            #expect(try await alice.run(["sync"]).status == 0)
            let invitation = try await SharedAccountsTests.onlyInvitation(bob)
            #expect(try await bob.run(["accept", try #require(invitation["id"] as? String)]).status == 0)
            #expect(try await bob.run(["accounts", "add", "Wallet", "--currency", "EUR"]).status == 0)
            #expect(try await bob.run(["sync"]).status == 0)

            // When Bob records offline, the row waits: marked, and pending in --json
            let offline = try await bob.run(["add", "expense", "2", "--account", "Wallet", "--note", "offline"], server: unreachableServer)
            #expect(offline.status == 0, "\(offline.stderr)")
            let waiting = try await bob.run(["list"], server: unreachableServer, environment: ["COLUMNS": "80"])
            let lines = waiting.stdout.split(separator: "\n")
            #expect(lines.contains { $0.hasPrefix("⋯") && $0.contains("offline") }, "\(waiting.stdout)")
            #expect(lines.last == "⋯ waits to be sent" && lines.allSatisfy { $0.count <= 80 }, "\(waiting.stdout)")
            #expect(try await Self.states(bob, server: unreachableServer)["offline"]?["state"] as? String == "pending")
            #expect(try await Self.states(bob, server: unreachableServer)["offline"]?["count"] as? Int == 1)
            // Then a sync confirms it, and the list has no marks
            #expect(try await bob.run(["sync"]).status == 0)
            #expect(try await Self.states(bob)["offline"] as? [String: String] == ["state": "confirmed"])
            #expect(!(try await bob.run(["list"]).stdout.contains("⋯")))

            // When Alice makes him a viewer of Trip (from her phone) and he records in it before his device hears of it,
            // the server refuses it, said at once with what to do: marked, with its words
            let alices = try await spendingDevice(alice.dataDirectory, server: server).open()
            let space = try #require(try alices.sharing.shares().keys.first)
            try await alices.spaces.setRole(.viewer, of: bobName, in: space)
            #expect(await alices.device.sync().isComplete)
            let recorded = try await bob.run(["add", "expense", "9", "--account", "Trip", "--note", "refused"])
            let said = recorded.stdout.replacingOccurrences(of: "\n", with: " ")
            #expect(recorded.status == 0 && said.contains("The server refused it: You are a viewer of")
                    && said.contains("See `spendiq failures`, then `spendiq settle ID --keep-mine | --take-theirs | --discard`."), "\(recorded.stdout)")
            #expect(recorded.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(recorded.stdout)")
            let refused = try await Self.states(bob)["refused"]
            #expect(refused?["state"] as? String == "failed" && (refused?["reason"] as? String)?.hasPrefix("You are a viewer of") == true, "\(String(describing: refused))")
            let marked = try await bob.run(["list"])
            #expect(marked.stdout.split(separator: "\n").contains { $0.hasPrefix("!") && $0.contains("refused") }, "\(marked.stdout)")
            #expect(marked.stdout.hasSuffix("! refused by the server: spendiq failures\n"), "\(marked.stdout)")
            let failures = try #require(try await bob.run(["failures", "--json"]).json() as? [[String: Any]])
            #expect(failures.count == 1 && failures.first?["what"] as? String == "expense EUR 9.00 on Trip")
            let id = try #require(failures.first?["shortId"] as? String)
            #expect(try await bob.run(["failures"]).stdout.contains(id))

            // Then settling: exactly one choice; taking theirs is refused when the server said nothing of the record
            let none = try await bob.run(["settle", id])
            #expect(none.isOneLineError && none.status == 64, "\(none.stderr)")
            let theirs = try await bob.run(["settle", id, "--take-theirs"])
            #expect(theirs.isOneLineError && theirs.stderr.contains("--keep-mine or --discard"), "\(theirs.stderr)")
            // keeping it sends it again, and the server refuses it again: an error, exit 1, as in the other apps
            let kept = try await bob.run(["settle", id, "--keep-mine"])
            #expect(kept.isOneLineError && kept.status == 1, "\(kept.stdout)\(kept.stderr)")
            #expect(kept.stderr.hasPrefix("spendiq: The server refused the expense EUR 9.00 on Trip again: You are a viewer of")
                    && kept.stderr.contains(" (`spendiq failures` lists it as "), "\(kept.stderr)")
            let refusedAgain = try #require(try await bob.run(["failures", "--json"]).json() as? [[String: Any]])
            let again = try #require(refusedAgain.first?["shortId"] as? String)
            #expect(kept.stderr.hasSuffix("lists it as \(again))\n"), "\(kept.stderr)")
            // discarding drops it, and says the truth: the server never had that expense, and it is gone from the device too
            let discarded = try await bob.run(["settle", again, "--discard"])
            #expect(discarded.status == 0 && discarded.stdout.hasPrefix("Discarded your change to the expense EUR 9.00 on Trip"), "\(discarded.stdout)")
            #expect(discarded.stdout.replacingOccurrences(of: "\n", with: " ").contains(": the server never had it, so it is gone from this device.")
                    && !discarded.stdout.contains("server's version"), "\(discarded.stdout)")
            #expect(try await Self.states(bob)["refused"] == nil)
            #expect(try await bob.run(["failures"]).stdout == "Nothing was refused.\n")
            #expect(try #require(try await bob.run(["failures", "--json"]).json() as? [Any]).isEmpty)
        }
    }

    @Test(arguments: Backend.available)
    func watchReprintsWhenAnotherDevicesChangeArrivesLiveAndEndsCleanlyOnSIGTERM(_ backend: Backend) async throws {
        try await SharedAccountsTests.withServer(backend) { server, folder in
            // Given an account Alice shares with Bob, who accepted
            let (alice, _) = try await SharedAccountsTests.person("alice", server, folder)
            let (bob, bobName) = try await SharedAccountsTests.person("bob", server, folder)
            #expect(try await alice.run(["accounts", "add", "Home", "--currency", "EUR"]).status == 0)
            #expect(try await alice.run(["add", "expense", "1", "--account", "Home", "--note", "before"]).status == 0)
            #expect(try await alice.run(["accounts", "share", "Home", "--with", bobName]).status == 0)
            #expect(try await alice.run(["sync"]).status == 0)
            #expect(try await bob.run(["accept", try #require(try await SharedAccountsTests.onlyInvitation(bob)["id"] as? String)]).status == 0)
            #expect(try await bob.run(["sync"]).status == 0)

            // When Bob watches his list while Alice records, then SIGTERM ends the watch
            // NB: its syncs an hour apart: Alice's transaction comes by the live channel (SpendiQ's
            // subscriptions name the transactions twice, recent first; its channel never opened).
            async let watched = BuiltExecutable.run("/usr/bin/timeout", [
                "--preserve-status", "-s", "TERM", "10", BuiltExecutable.path("spendiq"), "list", "--watch", "--json", "--every", "3600",
            ], environment: ["SPENDIQ_DATA_DIR": bob.dataDirectory.path, "SPENDIQ_SERVER": server.absoluteString, "SPENDIQ_ANSWER_TIMEOUT": "5"])
            try await Task.sleep(for: .seconds(3))
            #expect(try await alice.run(["add", "expense", "2", "--account", "Home", "--note", "during"]).status == 0)
            let outcome = try await watched

            // Then it printed the list, then again with Alice's transaction, one JSON document a line, and ended with status 0
            #expect(outcome.status == 0, "\(outcome.stderr)")
            let documents = try outcome.stdout.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [[String: Any]] ?? [] }
            #expect(documents.count >= 2, "\(outcome.stdout)")
            #expect(documents.first?.compactMap { $0["note"] as? String } == ["before"])
            #expect(documents.last?.compactMap { $0["note"] as? String } == ["during", "before"])
            #expect(documents.last?.first?["syncState"] as? [String: String] == ["state": "confirmed"])
        }
    }
}
