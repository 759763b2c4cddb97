import EventualAPI
import Foundation
import Testing

/// What a week of use by two people found in the pantry's words (issue 46), each through the built commands.
@Suite("pantry after a week of use: words that are true", .timeLimit(.minutes(5)), .tags(.endToEnd))
struct WeekOfUseTests {
    @Test func aFarAwayExpiryLeavesTheNamesTheirRoomAt80Columns() async throws {
        try await withLiveServer { server, scratch in
            // Given a long-named item expiring soon and another in the year 9999
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            try await ann.run(["add", "--name", "Wholemeal bread rolls", "--expires", "+3d", "--category", "bakery", "--where", "market"])
            try await ann.run(["add", "--name", "Honey from the hills", "--expires", "9999-12-31"])

            // When the list is printed in 80 columns
            let list = try await ann.pantry.run(["list"], environment: ["COLUMNS": "80"])

            // Then every name is whole, the far day is its date alone, and no line is wider than 80
            #expect(list.stdout.contains("Wholemeal bread rolls") && list.stdout.contains("Honey from the hills"), "\(list.stdout)")
            #expect(list.stdout.contains("9999-12-31") && !list.stdout.contains("2912"), "\(list.stdout)")
            #expect(list.stdout.contains("(in 3 days)"), "\(list.stdout)")
            #expect(list.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(list.stdout)")
        }
    }

    @Test func anItemThisDeviceHasNotHeardOfMayNotBeHereYet() async throws {
        try await withLiveServer { server, scratch in
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            // When she asks for an id this device does not hold
            let unknown = try await ann.pantry.run(["show", "dc711cbd"])
            // Then it says it may come with a sync, not that the pantry has no such item
            #expect(unknown.status == 1 && unknown.isOneLineError, "\(unknown.stderr)")
            #expect(unknown.stderr.hasPrefix("pantry: No item dc711cbd on this device (yet: one added on another device arrives with `pantry sync`"),
                    "\(unknown.stderr)")
        }
    }

    @Test func anInvitationOfNoOneFailsNowAndLeavesNothingForEveryLaterSyncToFailOn() async throws {
        try await withLiveServer { server, scratch in
            // Given Ann's household, online
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            try await ann.run(["household", "create", "Home"])

            // When she invites a username nobody has
            let invite = try await ann.pantry.run(["household", "invite", "nobody-here"])

            // Then it fails now, in one line, saying nothing waits
            #expect(invite.status == 1 && invite.isOneLineError && invite.stdout.isEmpty, "\(invite.stdout)\(invite.stderr)")
            #expect(invite.stderr.contains("The server refused it: ") && invite.stderr.contains("nothing of it waits on this device"), "\(invite.stderr)")
            // And the next syncs succeed: the refusal she was told of is not held against them
            let sync = try await ann.pantry.run(["sync"])
            #expect(sync.status == 0 && sync.stdout.hasPrefix("Synced"), "\(sync.stdout)\(sync.stderr)")
            #expect(try await ann.run(["failures"]).stdout == "Nothing was refused.\n")
        }
    }

    @Test func aLongRefusalIsSaidWholeNeverCutMidWord() async throws {
        try await withLiveServer(configure: { $0.quotas.syncRecordsPerUser = 1 }) { server, scratch in
            // Given a refusal waiting whose reason is a long sentence (the quota's)
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            for name in ["Eggs", "Figs"] { try await ann.run(["add", "--name", name]) }
            // When she syncs, at 80 columns
            let sync = try await ann.pantry.run(["sync"], environment: ["COLUMNS": "80"])
            // Then the error is one line that ends with what to do, not "…" in the middle of a word
            #expect(sync.status == 1 && sync.isOneLineError, "\(sync.stderr)")
            #expect(sync.stderr.contains("Quota reached") && !sync.stderr.contains("…"), "\(sync.stderr)")
            #expect(sync.stderr.hasSuffix("`pantry settle ID --keep-mine | --take-theirs | --discard`\n"), "\(sync.stderr)")
        }
    }
}
