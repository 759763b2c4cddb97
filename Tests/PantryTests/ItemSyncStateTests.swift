import Foundation
import Testing

/// Each item's sync state through the real `pantry` command and a real server: marked while it
/// waits or after a refusal, carried in `--json`, settled by the person, and watched live.
@Suite("pantry shows each item's sync state and settles refusals", .timeLimit(.minutes(6)), .tags(.endToEnd))
struct ItemSyncStateTests {
    @Test func anOfflineAddIsMarkedWaitingThenConfirmedOnceSynced() async throws {
        try await withLiveServer { server, scratch in
            // Given an item added offline
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            try await ann.run(["add", "--name", "Jam"], server: unreachableServer)
            // Then the list marks it, with a legend, and the JSON says it waits
            let waiting = try await ann.run(["list"], server: unreachableServer)
            let lines = waiting.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 3 && lines[1].hasPrefix("⋯") && lines[2].contains("⋯ waits to be sent"), "\(waiting.stdout)")
            let state = try #require(try await ann.items(server: unreachableServer).first?["syncState"] as? [String: Any])
            #expect(state["state"] as? String == "pending" && state["count"] as? Int == 1, "\(state)")
            let jam = try #require(try await ann.items(server: unreachableServer).first?["id"] as? String)
            #expect(try await ann.run(["show", jam], server: unreachableServer).stdout.contains("sync      ⋯ waits to be sent"))
            let shown = try jsonObject(try await ann.run(["show", jam, "--json"], server: unreachableServer))
            #expect((shown["syncState"] as? [String: Any])?["state"] as? String == "pending", "\(shown)")
            // When it is synced, then it is confirmed and the list has no mark column
            try await ann.run(["sync"])
            #expect(try await ann.items().first?["syncState"] as? [String: String] == ["state": "confirmed"])
            #expect(try await ann.run(["list"]).stdout.hasPrefix("ID"))
        }
    }

    @Test(arguments: Backend.available, ["--take-theirs", "--keep-mine", "--discard"])
    func twoPeopleUseTheLastEggsOfflineTheRefusedOneIsShownAndSettled(backend: Backend, choice: String) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            // Given 3 eggs in Ann and Bob's household
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            let bob = try await PantryPerson.signUp("bob", server: server, scratch: scratch)
            try await household(ann: ann, bob: bob)
            try await ann.run(["add", "--name", "Eggs", "--quantity", "3", "--household", "Home"])
            try await ann.run(["sync"])
            try await bob.run(["sync"])
            let eggs = String(try await bob.itemID("Eggs").suffix(8))

            // When each uses 2 offline, and both sync, Ann first
            for person in [ann, bob] { try await person.run(["consume", eggs, "--quantity", "2"], server: unreachableServer) }
            try await ann.run(["sync"])
            let refused = try await bob.pantry.run(["sync"])
            #expect(refused.status == 1 && refused.stderr.contains("quantity cannot go below 0"), "\(refused.stderr)")
            // And the sync, the status and a sign-out send him to failures and settle (not retry or discard), in 80 columns
            let settle = "see `pantry failures`, then `pantry settle ID --keep-mine | --take-theirs | --discard`"
            #expect(refused.stderr.contains(settle) && !refused.stderr.contains("retry"), "\(refused.stderr)")
            let status = try await bob.pantry.run(["status"], environment: ["COLUMNS": "80"])
            #expect(status.stdout.replacingOccurrences(of: "\n", with: " ").contains("The server refused 1 change(s): " + settle + "."), "\(status.stdout)")
            #expect(status.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 } && !status.stdout.contains("retry"), "\(status.stdout)")
            let logout = try await bob.pantry.run(["logout"])
            #expect(logout.isOneLineError && logout.stderr.contains("refused by the server: " + settle + ", or sign out with --discard-refused"),
                    "\(logout.stderr)")

            // Then Bob's list marks the item refused with the server's words, and failures says why, with the rule's code
            let list = try await bob.run(["list"])
            #expect(list.stdout.contains("! refused by the server: pantry failures"), "\(list.stdout)")
            let state = try #require(try await bob.items().first?["syncState"] as? [String: Any])
            #expect(state["state"] as? String == "failed" && (state["reason"] as? String)?.contains("below 0") == true, "\(state)")
            let failures = try #require(try await bob.run(["failures", "--json"]).json() as? [[String: Any]])
            let failure = try #require(failures.first, "no failure")
            #expect(failures.count == 1 && failure["code"] as? String == "below_minimum" && failure["what"] as? String == "use of 2 of Eggs",
                    "\(failures)")
            let id = try #require(failure["shortId"] as? String)

            // When he settles it
            let settled = try await bob.run(choice == "--keep-mine" ? ["settle", id, choice, "--quantity", "0"] : ["settle", id, choice])
            try await ann.run(["sync"])
            try await bob.run(["sync"])

            // Then nothing is refused any more, and both devices agree: 1 left (theirs, or discarding his), or finished (mine, kept with 0)
            #expect(try #require(try await bob.run(["failures", "--json"]).json() as? [Any]).isEmpty)
            for person in [ann, bob] {
                let items = try await person.items()
                if choice != "--keep-mine" {
                    let said = choice == "--take-theirs" ? "Took the server's version (1 left)" : "Discarded your use of 2 of Eggs; the server's version is back (1 left)."
                    #expect(settled.stdout.replacingOccurrences(of: "\n", with: " ").contains(said), "\(settled.stdout)")
                    #expect(items.first?["quantity"] as? Double == 1 && items.first?["syncState"] as? [String: String] == ["state": "confirmed"],
                            "\(person.username): \(items)")
                } else {
                    #expect(settled.stdout.contains("Kept your use of 2 of Eggs"), "\(settled.stdout)")
                    #expect(items.isEmpty, "\(person.username): \(items)")
                }
            }
        }
    }

    @Test(arguments: Backend.available)
    func anItemAddedBeforeBeingMadeAViewerIsRefusedKeptInVainThenDiscardedAsOneTheServerNeverHad(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            // Given Bob, an editor of Ann's household, who adds jam to it offline
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            let bob = try await PantryPerson.signUp("bob", server: server, scratch: scratch)
            try await household(ann: ann, bob: bob)
            try await bob.run(["add", "--name", "Jam", "--household", "Home"], server: unreachableServer)

            // When Ann makes him a viewer before he syncs, the server refuses the jam
            #expect(try await ann.run(["household", "role", bob.username, "viewer", "--in", "Home"]).stdout.contains("Made \(bob.username) viewer of Home"))
            let sync = try await bob.pantry.run(["sync"])
            #expect(sync.status == 1 && sync.stderr.contains("viewer"), "\(sync.stderr)")
            let failures = try #require(try await bob.run(["failures", "--json"]).json() as? [[String: Any]])
            #expect(failures.count == 1 && failures.first?["what"] as? String == "new item Jam", "\(failures)")
            let first = try #require(failures.first?["shortId"] as? String)

            // When he keeps it, the server refuses it again: an error, exit 1, as in the other apps
            let kept = try await bob.pantry.run(["settle", first, "--keep-mine"])
            #expect(kept.isOneLineError && kept.status == 1, "\(kept.stdout)\(kept.stderr)")
            #expect(kept.stderr.hasPrefix("pantry: The server refused the new item Jam again: ") && kept.stderr.contains("viewer")
                    && kept.stderr.contains(" (`pantry failures` lists it as "), "\(kept.stderr)")
            let again = try #require(try await bob.run(["failures", "--json"]).json() as? [[String: Any]])
            let id = try #require(again.first?["shortId"] as? String)
            // (stamped again, the change has a new id: the error names it, so the one typed is no dead end)
            #expect(again.count == 1 && id != first && kept.stderr.hasSuffix("lists it as \(id))\n"), "\(again) \(kept.stderr)")

            // Then discarding it says what happened: the server never had the jam, and it is gone from his device
            let discarded = try await bob.run(["settle", id, "--discard"])
            #expect(discarded.stdout.replacingOccurrences(of: "\n", with: " ")
                    == "Discarded your new item Jam: the server never had it, so it is gone from this device. ", "\(discarded.stdout)")
            #expect(try await bob.items().isEmpty)
            #expect(try #require(try await bob.run(["failures", "--json"]).json() as? [Any]).isEmpty)
        }
    }

    @Test func settleTakesExactlyOneChoiceAndSaysWhenNothingWasRefused() async throws {
        try await withLiveServer { server, scratch in
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            for arguments in [["settle", "1a2b3c4d"], ["settle", "1a2b3c4d", "--keep-mine", "--discard"],
                              ["settle", "1a2b3c4d", "--discard", "--quantity", "1"], ["settle", "1a2b3c4d", "--keep-mine", "--quantity", "-1"],
                              ["settle", "1a", "--discard"], ["list", "--watch", "--every", "0"], ["list", "--every", "5"],
                              ["list", "--watch", "--every", "abc"], ["list", "--watch", "--every", "1.5"],
                              ["list", "--watch", "--every", "99999999999999999999"]] {
                let outcome = try await ann.pantry.run(arguments)
                #expect(outcome.status == 64 && outcome.isOneLineError, "\(arguments): \(outcome.stderr)")
            }
            // --every alone was ignored before: it paces --watch, and says so
            #expect(try await ann.pantry.run(["list", "--every", "5"]).stderr.contains("--every is the pace of --watch"))
            // A value that is no whole number says what is, as an out-of-range one does
            for value in ["abc", "1.5", "99999999999999999999", "0"] {
                let refused = try await ann.pantry.run(["list", "--watch", "--every", value]).stderr
                #expect(refused.contains("1 to 3600") && refused.contains(value), "\(value): \(refused)")
            }
            let none = try await ann.pantry.run(["settle", "1a2b3c4d", "--discard"])
            #expect(none.status == 1 && none.isOneLineError, "\(none.stderr)")
            #expect(try await ann.run(["failures"]).stdout == "Nothing was refused.\n")
            for command in ["failures", "settle"] {
                #expect(try await ann.run([command, "--help"]).stdout.contains("Example: pantry"))
            }
        }
    }

    /// On a terminal the watched list says under it how changes arrive; Ann's bread reaches Bob's
    /// screen by the live channel, his watch's timer an hour away.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs util-linux's script for a terminal"))
    func onATerminalTheWatchSaysItIsLiveAndAnotherPersonsChangeArrives() async throws {
        try await withLiveServer { server, scratch in
            let (ann, bob) = try await Self.householdWithMilk(server: server, scratch: scratch)
            // When Bob watches his list on a terminal (script's), with syncs an hour apart
            let command = "timeout --preserve-status -s INT 14 '\(BuiltExecutable.path("pantry"))' list --watch --every 3600"
            async let watched = BuiltExecutable.run("/usr/bin/script", ["-qfec", command, "/dev/null"], environment: Self.watching(bob, server).merging(["COLUMNS": "80"]) { $1 })
            // NB: while the watch is live (its line says so), Ann adds bread
            try await Task.sleep(for: .seconds(5))
            try await ann.run(["add", "--name", "Bread", "--household", "Home"])
            try await ann.run(["sync"])
            let outcome = try await watched
            // Then the screen said it was live, and was drawn again with the bread under that line
            #expect(outcome.status == 0, "\(outcome.status) \(outcome.stderr)")
            let screens = outcome.stdout.components(separatedBy: "\u{1B}[H\u{1B}[2J").filter { !$0.isEmpty }
            let live = screens.filter { $0.contains("● live: other devices' changes show as they are made") }
            #expect(!live.isEmpty, "\(outcome.stdout)")
            // And never that it was not live: before the channel opened it said it was connecting
            #expect(!screens.contains { $0.contains("not live") }, "\(outcome.stdout)")
            #expect(screens.last?.contains("Bread") == true && screens.last?.contains("Milk") == true, "\(outcome.stdout)")
            // And every line of every screen fits 80 columns
            // NB: a terminal's lines end in "\r\n", one Character in Swift
            for line in screens.flatMap({ $0.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }) }) {
                #expect(line.trimmingCharacters(in: .whitespaces).count <= 80, "\(line)")
            }
        }
    }

    @Test(arguments: ["INT", "TERM"])
    func watchReprintsWhenAnotherPersonsChangeArrivesAndEndsCleanlyOnASignal(signal: String) async throws {
        try await withLiveServer { server, scratch in
            // Given Ann and Bob's household with milk in it
            let (ann, bob) = try await Self.householdWithMilk(server: server, scratch: scratch)

            // When Bob watches his list while Ann adds bread, until a signal ends the watch
            // NB: the watch syncs once at its start, then every hour: Ann's bread comes by the live channel
            // (or by that first sync, on a machine so slow the watch starts after Ann's sync).
            async let watched = BuiltExecutable.run("/usr/bin/timeout", [
                "--preserve-status", "-s", signal, "15", BuiltExecutable.path("pantry"), "list", "--watch", "--json", "--every", "3600",
            ], environment: Self.watching(bob, server))
            try await Task.sleep(for: .seconds(3))
            try await ann.run(["add", "--name", "Bread", "--household", "Home"])
            try await ann.run(["sync"])
            let outcome = try await watched

            // Then it printed the list, then again with Ann's bread, one whole JSON document a line, and ended with status 0
            #expect(outcome.status == 0 && outcome.stderr.isEmpty, "\(outcome.status) \(outcome.stderr)")
            #expect(outcome.stdout.hasSuffix("\n"))
            let documents = try outcome.stdout.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [[String: Any]] ?? [] }
            #expect(documents.count >= 2, "\(outcome.stdout)")
            #expect(documents.first?.compactMap { $0["name"] as? String } == ["Milk"])
            #expect(Set(documents.last?.compactMap { $0["name"] as? String } ?? []) == ["Bread", "Milk"], "\(outcome.stdout)")
            #expect(documents.last?.first { $0["name"] as? String == "Bread" }?["changedBy"] as? String == ann.username)
        }
    }

    /// A watch piped to a reader that took what it wanted (`| head -n 1`) ends then, with status
    /// 0, not at its next print: nothing may change for hours.
    @Test func aWatchWhoseReaderWentAwayEndsAtOnceThoughNothingChanges() async throws {
        try await withLiveServer { server, scratch in
            let (_, bob) = try await Self.householdWithMilk(server: server, scratch: scratch)
            let watch = "timeout --preserve-status -s INT 30 '\(BuiltExecutable.path("pantry"))' list --watch --json --every 3600"
            let started = ContinuousClock.now
            let outcome = try await BuiltExecutable.run("/bin/bash", ["-c", "\(watch) | head -n 1; echo \"watch status ${PIPESTATUS[0]}\" >&2"],
                                                        environment: Self.watching(bob, server))
            #expect(ContinuousClock.now - started < .seconds(10), "the watch went on after head had its line")
            let names = try (JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [[String: Any]])?.compactMap { $0["name"] as? String }
            #expect(names == ["Milk"], "\(outcome.stdout)")
            #expect(outcome.stderr == "watch status 0\n", "\(outcome.stderr)")
        }
    }

    /// What another command does on the same device shows in a watch at once: a write (its own
    /// push never signals the device's channel), sent by the watch when that command could not,
    /// and a sign-out, which ends the watch.
    @Test func aWatchShowsWhatAnotherCommandOnTheDeviceWritesAndEndsWhenItSignsOut() async throws {
        try await withLiveServer { server, scratch in
            let (ann, bob) = try await Self.householdWithMilk(server: server, scratch: scratch)
            // Given Bob watching his list, with syncs an hour apart
            async let watched = BuiltExecutable.run("/usr/bin/timeout", [
                "--preserve-status", "-s", "INT", "60", BuiltExecutable.path("pantry"), "list", "--watch", "--json", "--every", "3600",
            ], environment: Self.watching(bob, server))
            try await Task.sleep(for: .seconds(3))
            // When another command of his adds tea, then, once the watch could show it, signs him out
            try await bob.run(["add", "--name", "Tea", "--household", "Home"])
            // And figs from a command that could not reach the server (it left them waiting)
            try await bob.run(["add", "--name", "Figs", "--household", "Home"], server: URL(string: "http://127.0.0.1:9")!)
            // Then the watch sends them, though its channel is live and its timer far off
            var annHasFigs = false
            for _ in 0..<10 where !annHasFigs {
                try await Task.sleep(for: .milliseconds(500))
                try await ann.run(["sync"])
                annHasFigs = try await ann.items().contains { $0["name"] as? String == "Figs" }
            }
            #expect(annHasFigs, "the watch never sent what another command left waiting")
            try await Task.sleep(for: .seconds(1))
            let signingOut = ContinuousClock.now
            try await bob.run(["logout"])
            let outcome = try await watched
            let ended = ContinuousClock.now

            // Then the watch showed the tea, then ended at the sign-out (not at the timeout's
            // signal), saying why, with a status that is not success
            let documents = try outcome.stdout.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [[String: Any]] ?? [] }
            #expect(documents.first?.compactMap { $0["name"] as? String } == ["Milk"], "\(outcome.stdout)")
            #expect(Set(documents.last?.compactMap { $0["name"] as? String } ?? []) == ["Figs", "Milk", "Tea"], "\(outcome.stdout)")
            #expect(ended - signingOut < .seconds(10), "the watch went on after the sign-out")
            #expect(outcome.status != 0 && outcome.stderr.contains("signed out"), "\(outcome.status) \(outcome.stderr)")
            #expect(outcome.stderr.split(separator: "\n").count == 1, "\(outcome.stderr)")
        }
    }

    /// Ann and Bob, signed up, in Ann's household Home with her milk in it, both synced.
    static func householdWithMilk(server: URL, scratch: ScratchFolder) async throws -> (ann: PantryPerson, bob: PantryPerson) {
        let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
        let bob = try await PantryPerson.signUp("bob", server: server, scratch: scratch)
        try await household(ann: ann, bob: bob)
        try await ann.run(["add", "--name", "Milk", "--household", "Home"])
        try await ann.run(["sync"])
        try await bob.run(["sync"])
        return (ann, bob)
    }

    /// The environment of `person`'s `pantry` run by hand (not by `PantryPerson.run`): their
    /// data folder, the server, 5 s for it to answer.
    static func watching(_ person: PantryPerson, _ server: URL) -> [String: String] {
        ["PANTRY_DATA_DIR": person.pantry.dataDirectory.path, "PANTRY_SERVER": server.absoluteString, "PANTRY_ANSWER_TIMEOUT": "5"]
    }
}
