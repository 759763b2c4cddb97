import Foundation
import Testing

/// The `chores` executable against a real server on a loopback port, as two people of one household use it.
@Suite("The chores command", .timeLimit(.minutes(4)))
struct ChoresCommandTests {
    @Test func aHouseholdSharesItsChoresAndWhatIsDoneOfflineArrivesWithTheNextSync() async throws {
        try await withLiveServer { server, scratch in
            // Given alice and bob on their own devices, and bob in alice's household
            let alice = CommandProcess("chores", dataDirectory: scratch.folder("alice"), server: server)
            let bob = CommandProcess("chores", dataDirectory: scratch.folder("bob"), server: server)
            let aliceName = try await alice.signUp(name: "alice").username, bobName = try await bob.signUp(name: "bob").username
            try Self.succeeded(try await alice.run(["household", "create", "Home"]), saying: "Created the household Home.")
            try Self.succeeded(try await alice.run(["household", "invite", bobName]), saying: "Invited \(bobName) to Home.")
            let invitations = try #require(try await bob.run(["invitations", "--json"]).json() as? [String: Any])
            let invitation = try #require((invitations["invitations"] as? [[String: Any]])?.first?["id"] as? String)
            let joined = try await bob.run(["accept", String(invitation.suffix(8))])
            #expect(joined.status == 0 && joined.stdout.hasPrefix("Joined Home (\(aliceName)'s invitation, as editor)"), "\(joined.stdout)\(joined.stderr)")

            // When alice adds three chores and gives one to bob, in a basement
            let bins = try Self.added(try await alice.run(["add", "Bins", "--due", "2026-05-01"], server: unreachableServer))
            _ = try Self.added(try await alice.run(["add", "Dishes"], server: unreachableServer))
            _ = try Self.added(try await alice.run(["add", "Plants", "--due", "2026-04-20"], server: unreachableServer))
            try Self.succeeded(try await alice.run(["assign", bins, bobName], server: unreachableServer),
                               saying: "Bins is \(bobName)'s: saved here, sent when the server answers (chores sync).")
            let waiting = try await Self.list(alice, server: unreachableServer)
            #expect(waiting.map { $0["title"] as? String } == ["Plants", "Bins", "Dishes"], "open, the soonest due first, undated last")
            #expect(waiting.allSatisfy { ($0["syncState"] as? [String: Any])?["state"] as? String == "pending" }, "\(waiting)")
            #expect(try await Self.list(bob).isEmpty, "nothing reached the server yet")

            // Then once alice syncs, bob sees them, in Home, Bins his; and he ticks it
            #expect(try await alice.run(["sync"]).status == 0)
            #expect(try await bob.run(["sync"]).status == 0)
            let seen = try await Self.list(bob)
            let keys: Set = ["id", "shortId", "title", "assignee", "due", "done", "space", "spaceId", "changedBy", "syncState"]
            #expect(seen.count == 3 && seen.allSatisfy { Set($0.keys) == keys }, "\(seen)")
            let binsSeen = try #require(seen.first { $0["shortId"] as? String == bins })
            #expect(binsSeen["assignee"] as? String == bobName && binsSeen["due"] as? String == "2026-05-01" && binsSeen["done"] as? Bool == false)
            #expect(binsSeen["space"] as? String == "Home" && binsSeen["changedBy"] as? String == aliceName)
            let tick = try await bob.run(["tick", bins])
            #expect(tick.status == 0 && tick.stdout.hasPrefix("Done: Bins"), "\(tick.stderr)")
            #expect(try await bob.run(["sync"]).status == 0, "sent now if the local budget was too short for it")

            // And alice sees it ticked, last changed by bob, at the end of her list
            #expect(try await alice.run(["sync"]).status == 0)
            let after = try await Self.list(alice)
            #expect(after.map { $0["title"] as? String } == ["Plants", "Dishes", "Bins"], "open first")
            #expect(after.last?["done"] as? Bool == true && after.last?["changedBy"] as? String == bobName, "\(after)")
            #expect(after.allSatisfy { ($0["syncState"] as? [String: Any])?["state"] as? String == "confirmed" }, "\(after)")
        }
    }

    @Test func aMistakeIsOneLineOnStderr() async throws {
        try await withLiveServer { server, scratch in
            let device = CommandProcess("chores", dataDirectory: scratch.folder("carol"), server: server)
            _ = try await device.signUp(name: "carol")
            // A usage mistake: status 64
            for arguments in [["add", "Dishes", "--due", "2026-02-30"], ["add"], ["tick"], ["add", " "], ["list", "--colour"], ["accept"], ["add", "Dishes\nand pans"], ["assign", "1a2b3c4d", "b\tob"]] {
                let mistake = try await device.run(arguments)
                #expect(mistake.isOneLineError && mistake.status == 64, "\(arguments): \(mistake.status) \(mistake.stderr)")
            }
            #expect(try await device.run(["add", "Dishes", "--due", "2026-02-30"]).stderr.contains("'2026-02-30' is not a day"))
            // An id no chore has: a failure, said in one line
            let unknown = try await device.run(["tick", "0123abcd"])
            #expect(unknown.isOneLineError && unknown.status == 1 && unknown.stderr == "chores: No chore 0123abcd on this device\n", "\(unknown.stderr)")
            let short = try await device.run(["tick", "abc"])
            #expect(short.isOneLineError && short.status == 64 && short.stderr.contains("give the 8 characters"), "\(short.stderr)")
            let noHousehold = try await device.run(["household", "invite", "dave"])
            #expect(noHousehold.isOneLineError && noHousehold.stderr.contains("chores household create NAME"), "\(noHousehold.stderr)")
        }
    }

    @Test func anInvitationOfNoOneAChoreForAStrangerAndAnUndoOfAnOpenChoreAreSaidForWhatTheyAre() async throws {
        try await withLiveServer { server, scratch in
            // Given alice online, in her household Flat
            let alice = CommandProcess("chores", dataDirectory: scratch.folder("alice"), server: server)
            let aliceName = try await alice.signUp(name: "alice").username
            try Self.succeeded(try await alice.run(["household", "create", "Flat"]), saying: "Created the household Flat.")
            #expect(try await alice.run(["sync"]).status == 0)
            let households = try #require(try await alice.run(["household", "--json"]).json() as? [[String: Any]])
            #expect(households.count == 1 && households.first?["name"] as? String == "Flat" && households.first?["role"] as? String == "owner"
                    && Set(households.first.map { Array($0.keys) } ?? []) == ["id", "name", "role", "owner"], "\(households)")

            // When she invites someone who has no account
            let invite = try await alice.run(["household", "invite", "nobody-here"])
            // Then it fails now, in one line, and nothing of it is left to fail every later sync
            #expect(invite.status == 1 && invite.isOneLineError && invite.stdout.isEmpty, "\(invite.stdout)\(invite.stderr)")
            #expect(invite.stderr.hasPrefix("chores: The server refused it: ") && invite.stderr.contains("nothing was sent"), "\(invite.stderr)")
            let sync = try await alice.run(["sync"])
            #expect(sync.status == 0 && sync.stdout.hasPrefix("Synced"), "\(sync.stdout)\(sync.stderr)")
            #expect(try await alice.run(["failures"]).stdout == "Nothing was refused.\n")

            // When she gives a chore to someone not in Flat
            let stranger = try await alice.run(["add", "Bins", "--assign", "nobody-here"])
            // Then it is refused, naming who is in it, and no chore is made
            #expect(stranger.status == 1 && stranger.isOneLineError, "\(stranger.stdout)\(stranger.stderr)")
            #expect(stranger.stderr == "chores: nobody-here is not in Flat: give a chore there to \(aliceName) (someone invited is in once they accept)\n",
                    "\(stranger.stderr)")
            #expect(try await Self.list(alice).isEmpty)
            let bins = try #require(try await alice.run(["add", "Bins", "--assign", aliceName]).stdout.firstMatch(of: #/^Added (\w{8}) /#)?.1)
            #expect(try await alice.run(["assign", String(bins), "nobody-here"]).stderr.contains("nobody-here is not in Flat"))

            // When she opens again a chore that is open
            let undo = try await alice.run(["tick", String(bins), "--undo"])
            // Then she is told it was not done, and nothing waits to be sent
            try Self.succeeded(undo, saying: "Bins is not done: nothing to open again.")
            #expect(try await alice.run(["tick", String(bins)]).stdout.hasPrefix("Done: Bins"))
            try Self.succeeded(try await alice.run(["tick", String(bins)]), saying: "Bins is done already.")
        }
    }

    @Test func aDueDayTakesTodayTomorrowAndPlusDaysAsThePantryDoes() async throws {
        try await withLiveServer { server, scratch in
            let device = CommandProcess("chores", dataDirectory: scratch.folder("dan"), server: server)
            _ = try await device.signUp(name: "dan")
            // When chores are added due tomorrow, in a day and in a week
            for due in ["tomorrow", "+1d", "+1w"] { #expect(try await device.run(["add", "Dishes " + due, "--due", due]).status == 0, "\(due)") }
            // Then each is due on that day of this device's calendar
            let day = { (offset: Int) in
                let date = Calendar.current.date(byAdding: .day, value: offset, to: Date())!
                let parts = Calendar.current.dateComponents([.year, .month, .day], from: date)
                return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
            }
            let dues = Dictionary(try await Self.list(device).map { ($0["title"] as? String ?? "", $0["due"] as? String ?? "") }) { first, _ in first }
            #expect(dues == ["Dishes tomorrow": day(1), "Dishes +1d": day(1), "Dishes +1w": day(7)], "\(dues)")
            let wrong = try await device.run(["add", "Dishes", "--due", "soon"])
            #expect(wrong.status == 64 && wrong.stderr.contains("today, tomorrow or +3d"), "\(wrong.stderr)")
        }
    }

    /// Expects a command to have succeeded and printed `line`.
    static func succeeded(_ outcome: CommandOutcome, saying line: String) throws {
        #expect(outcome.status == 0 && outcome.stdout == line + "\n", "\(outcome.stdout)\(outcome.stderr)")
    }

    /// The new chore's short id, from "Added 1a2b3c4d …".
    static func added(_ outcome: CommandOutcome) throws -> String {
        #expect(outcome.status == 0 && outcome.stdout.contains("saved here"), "\(outcome.stderr)")
        return String(try #require(outcome.stdout.firstMatch(of: #/^Added (\w{8}) /#)?.1))
    }

    static func list(_ device: CommandProcess, server: URL? = nil) async throws -> [[String: Any]] {
        try #require(try await device.run(["list", "--json"], server: server).json() as? [[String: Any]])
    }
}
