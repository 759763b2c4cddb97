import EventualAPI
import EventualKit
import EventualServer
import Foundation
import Testing
@testable import Spending

/// The way back from a shared account, through the spendiq command and a live server: a share
/// with no one moves nothing, and one refused later moves back; members, roles, removal, leaving
/// and unsharing; every member's device names the same people; transfers between one's own
/// account and a shared one.
@Suite("Shared accounts: the way back, through the spendiq command, on SQLite and PostgreSQL", .timeLimit(.minutes(8)), .tags(.endToEnd))
struct SharedAccountWayBackTests {
    typealias Shared = SharedAccountsTests

    static func account(_ device: CommandProcess, _ name: String) async throws -> [String: Any] {
        try #require(try await Shared.json(device, ["accounts"]).first { $0["name"] as? String == name }, "no account \(name)")
    }

    static func balance(_ device: CommandProcess, _ name: String) async throws -> Int? {
        try await account(device, name)["balanceMinor"] as? Int
    }

    /// Each account's balance, by name.
    static func balances(_ device: CommandProcess) async throws -> [String: Int] {
        Dictionary(try await Shared.json(device, ["accounts"]).compactMap { account in
            (account["name"] as? String).flatMap { name in (account["balanceMinor"] as? Int).map { (name, $0) } }
        }, uniquingKeysWith: { first, _ in first })
    }

    /// Bob's invitation accepted and both synced: the space's accounts are on his device.
    static func accept(_ bob: CommandProcess) async throws {
        let invitation = try await Shared.onlyInvitation(bob)
        #expect(try await bob.run(["accept", try #require(invitation["id"] as? String)]).status == 0)
        #expect(try await bob.run(["sync"]).status == 0)
    }

    @Test(arguments: Backend.available)
    func aShareWithNoOneMovesNothingOnlineAndMovesBackWhenRefusedLater(_ backend: Backend) async throws {
        try await Shared.withServer(backend) { server, folder in
            let (alice, _) = try await Shared.person("alice", server, folder)
            let (bob, bobName) = try await Shared.person("bob", server, folder)
            #expect(try await alice.run(["accounts", "add", "Bank", "--currency", "EUR"]).status == 0)
            for amount in ["10", "20", "30"] { #expect(try await alice.run(["add", "expense", amount, "--account", "Bank"]).status == 0) }
            #expect(try await alice.run(["sync"]).status == 0)

            // Online, a mistyped name is refused before anything moves, in one line
            let online = try await alice.run(["accounts", "share", "Bank", "--with", "nobody-here"])
            #expect(online.isOneLineError && online.stderr.hasPrefix("spendiq: nobody-here cannot be invited (")
                    && online.stderr.hasSuffix("): nothing was shared\n"), "\(online.stdout)\(online.stderr)")
            #expect(try await Self.account(alice, "Bank")["shared"] is NSNull)
            #expect(try await Shared.changesWaiting(alice).isEmpty)
            #expect(try await alice.run(["sync"]).status == 0)

            // Offline, the share is queued; when the server refuses the invitation, the move is undone and said
            let offline = try await alice.run(["accounts", "share", "Bank", "--with", "nobody-here"], server: unreachableServer)
            #expect(offline.status == 0 && offline.stdout.hasPrefix("Shared Bank and 3 transaction(s) with nobody-here"), "\(offline.stdout)\(offline.stderr)")
            let synced = try await alice.run(["sync"])
            let said = synced.stdout.replacingOccurrences(of: "\n", with: " ")
            #expect(synced.status == 0 && said.contains("nobody-here could not be invited (") && said.contains("Bank and 3 transaction(s) are yours alone again"),
                    "\(synced.stdout)\(synced.stderr)")
            #expect(try await Self.account(alice, "Bank")["shared"] is NSNull)
            #expect(try await Self.balance(alice, "Bank") == -6000)
            let list = try await Shared.json(alice, ["list"])
            #expect(list.count == 3 && list.allSatisfy { $0["space"] is NSNull }, "\(list)")
            #expect(try await Shared.changesWaiting(alice).isEmpty)
            #expect(try await alice.run(["sync"]).status == 0)

            // And sharing with the right person then works, with every transaction
            let right = try await alice.run(["accounts", "share", "Bank", "--with", bobName])
            #expect(right.status == 0 && right.stdout.replacingOccurrences(of: "\n", with: " ").hasPrefix("Shared Bank and 3 transaction(s) with \(bobName)"),
                    "\(right.stdout)\(right.stderr)")
            #expect(try await alice.run(["sync"]).status == 0)
            try await Self.accept(bob)
            #expect(try await Self.balance(bob, "Bank") == -6000)
        }
    }

    @Test(arguments: Backend.available)
    func membersRolesRemovalLeavingAndUnsharingAreTheWayBack(_ backend: Backend) async throws {
        try await Shared.withServer(backend) { server, folder in
            let (alice, aliceName) = try await Shared.person("alice", server, folder)
            let (dan, danName) = try await Shared.person("dan", server, folder)
            #expect(try await alice.run(["accounts", "add", "Bank", "--currency", "EUR"]).status == 0)
            #expect(try await alice.run(["add", "expense", "12", "--account", "Bank"]).status == 0)
            #expect(try await alice.run(["accounts", "share", "Bank", "--with", danName]).status == 0)
            #expect(try await alice.run(["sync"]).status == 0)
            try await Self.accept(dan)
            #expect(try await alice.run(["sync"]).status == 0)

            // Every member's device names the same people: dan's second device too, which never listed members
            let second = CommandProcess.spendiq(dataDirectory: folder.folder("dan-2"), server: server)
            let email = try #require(try await dan.run(["whoami", "--json"]).json() as? [String: Any])["email"] as? String
            #expect(try await second.run(["login", "--email", try #require(email), "--password-stdin"], input: "long-password\n").status == 0)
            for device in [dan, second] {
                let bank = try #require(try await Self.account(device, "Bank")["shared"] as? [String: Any])
                #expect(bank["with"] as? [String] == [aliceName] && bank["role"] as? String == "editor", "\(bank)")
            }
            #expect((try await Self.account(alice, "Bank")["shared"] as? [String: Any])?["with"] as? [String] == [danName])
            let members = try #require(try await second.run(["accounts", "members", "Bank", "--json"]).json() as? [String: Any])
            #expect(members["owner"] as? String == aliceName)
            #expect((members["members"] as? [[String: Any]])?.compactMap { $0["username"] as? String } == [aliceName, danName])

            // What the server would refuse is refused on the device, with the next step, and nothing is queued
            let ownerLeaves = try await alice.run(["accounts", "leave", "Bank"])
            #expect(ownerLeaves.isOneLineError && ownerLeaves.status == 1 && ownerLeaves.stderr.contains("spendiq accounts unshare Bank"), "\(ownerLeaves.stderr)")
            let stranger = try await alice.run(["accounts", "role", "Bank", "zed-nobody", "viewer"])
            #expect(stranger.isOneLineError && stranger.stderr.contains("zed-nobody is not in"), "\(stranger.stderr)")
            let notHers = try await dan.run(["accounts", "remove", "Bank", aliceName])
            #expect(notHers.isOneLineError && notHers.stderr.contains("shares Bank with you"), "\(notHers.stderr)")
            let danUnshares = try await dan.run(["accounts", "unshare", "Bank"])
            #expect(danUnshares.isOneLineError && danUnshares.status == 1 && danUnshares.stderr.contains("spendiq accounts leave Bank"), "\(danUnshares.stderr)")
            for device in [alice, dan] {
                let status = try #require(try await device.run(["status", "--json"]).json() as? [String: Any])
                let queued = (status["entries"] as? [[String: Any]] ?? []).compactMap { $0["what"] as? String }
                #expect(status["failed"] as? Int == 0 && !queued.contains { $0.contains("leaving") || $0.contains("removal") || $0.contains(" made ") },
                        "\(status)")
            }

            // A role change reaches dan: a viewer's write is then refused on his device
            let role = try await alice.run(["accounts", "role", "Bank", danName, "viewer"])
            #expect(role.status == 0, "\(role.stderr)")
            #expect(try await dan.run(["sync"]).status == 0)
            let refused = try await dan.run(["add", "expense", "1", "--account", "Bank"])
            #expect(refused.isOneLineError && refused.stderr.contains("You can only look at Bank"), "\(refused.stderr)")

            // Unsharing takes the account back: it leaves dan's devices, and alice keeps every transaction
            let unshared = try await alice.run(["accounts", "unshare", "Bank"])
            #expect(unshared.status == 0 && unshared.stdout.hasPrefix("Bank and 1 transaction(s) are yours alone again."), "\(unshared.stdout)\(unshared.stderr)")
            #expect(try await Self.account(alice, "Bank")["shared"] is NSNull)
            #expect(try await Self.balance(alice, "Bank") == -1200)
            for device in [dan, second] {
                #expect(try await device.run(["sync"]).status == 0)
                #expect(try await Shared.json(device, ["accounts"]).isEmpty)
            }

            // Sharing again reuses the space; dan, removed, has his account taken from him
            #expect(try await alice.run(["accounts", "add", "Joint", "--currency", "EUR"]).status == 0)
            #expect(try await alice.run(["accounts", "share", "Joint", "--with", danName]).status == 0)
            #expect(try await alice.run(["sync"]).status == 0)
            #expect(try await dan.run(["sync"]).status == 0)
            #expect(try await Shared.json(dan, ["accounts"]).map { $0["name"] as? String } == ["Joint"])
            let removed = try await alice.run(["accounts", "remove", "Joint", danName])
            #expect(removed.status == 0, "\(removed.stderr)")
            #expect(try await dan.run(["sync"]).status == 0)
            #expect(try await Shared.json(dan, ["accounts"]).isEmpty)
            let members2 = try #require(try await alice.run(["accounts", "members", "Joint", "--json"]).json() as? [String: Any])
            #expect((members2["members"] as? [[String: Any]])?.compactMap { $0["username"] as? String } == [aliceName])

            // Shared with him once more, he is invited again; then he leaves it himself
            #expect(try await alice.run(["accounts", "add", "Trip", "--currency", "EUR"]).status == 0)
            #expect(try await alice.run(["accounts", "share", "Trip", "--with", danName]).status == 0)
            #expect(try await alice.run(["sync"]).status == 0)
            try await Self.accept(dan)
            // (Joint stays with Alice alone: he was removed from it)
            #expect(Set(try await Shared.json(dan, ["accounts"]).compactMap { $0["name"] as? String }) == ["Trip"])
            let left = try await dan.run(["accounts", "leave", "Trip"])
            #expect(left.status == 0 && left.stdout.contains("Left \(aliceName) & \(danName)"), "\(left.stdout)\(left.stderr)")
            #expect(try await Shared.json(dan, ["accounts"]).isEmpty)
        }
    }

    @Test(arguments: Backend.available)
    func anEditOfATransactionSomeoneElseDeletedIsRefusedAndSettledNeverLostInSilence(_ backend: Backend) async throws {
        try await Shared.withServer(backend) { server, folder in
            let (alice, _) = try await Shared.person("alice", server, folder)
            let (dan, danName) = try await Shared.person("dan", server, folder)
            #expect(try await alice.run(["accounts", "add", "Joint", "--currency", "EUR"]).status == 0)
            #expect(try await alice.run(["add", "expense", "10", "--account", "Joint", "--note", "pizza"]).status == 0)
            #expect(try await alice.run(["add", "expense", "20", "--account", "Joint", "--note", "cinema"]).status == 0)
            #expect(try await alice.run(["accounts", "share", "Joint", "--with", danName]).status == 0)
            #expect(try await alice.run(["sync"]).status == 0)
            try await Self.accept(dan)
            let list = try await Shared.json(dan, ["list"])
            let pizza = String(try #require(list.first { $0["note"] as? String == "pizza" }?["id"] as? String).suffix(8))
            let cinema = String(try #require(list.first { $0["note"] as? String == "cinema" }?["id"] as? String).suffix(8))

            // When Dan edits both offline, and Alice deletes them meanwhile
            #expect(try await dan.run(["edit", pizza, "--amount", "12"], server: unreachableServer).status == 0)
            #expect(try await dan.run(["edit", cinema, "--amount", "22"], server: unreachableServer).status == 0)
            #expect(try await alice.run(["delete", pizza]).status == 0)
            #expect(try await alice.run(["delete", cinema]).status == 0)
            #expect(try await alice.run(["sync"]).status == 0)

            // Then Dan's sync says his edits were refused, and why; never "Synced"
            let synced = try await dan.run(["sync"])
            #expect(synced.status == 1 && synced.stderr.contains("deleted"), "\(synced.stdout)\(synced.stderr)")
            let failures = try #require(try await dan.run(["failures", "--json"]).json() as? [[String: Any]])
            #expect(failures.count == 2, "\(failures)")
            // And each is settled: one brought back as he wrote it, one dropped; both devices then agree
            let ids = failures.compactMap { $0["id"] as? String }.map { String($0.suffix(8)) }
            let kept = try await dan.run(["settle", ids[0], "--keep-mine"])
            #expect(kept.status == 0, "\(kept.stderr)")
            // The kept one is back on his device at once, not only after his next sync
            #expect(try await Shared.json(dan, ["list"]).count == 1)
            #expect(try await dan.run(["settle", ids[1], "--discard"]).status == 0)
            #expect(try await dan.run(["sync"]).status == 0)
            #expect(try await alice.run(["sync"]).status == 0)
            for device in [alice, dan] {
                let left = try await Shared.json(device, ["list"])
                #expect(left.count == 1 && [1200, 2200].contains(left.first?["amountMinor"] as? Int ?? 0), "\(left)")
            }
            #expect(try await Shared.json(alice, ["list"]).first?["amountMinor"] as? Int == (try await Shared.json(dan, ["list"]).first?["amountMinor"] as? Int))
        }
    }

    @Test(arguments: Backend.available)
    func aRefusedSideOfATransferTakesItsOtherSideAndAnotherMembersSideNeverBlocksUnsharing(_ backend: Backend) async throws {
        try await Shared.withServer(backend) { server, folder in
            let (alice, _) = try await Shared.person("alice", server, folder)
            let (dan, danName) = try await Shared.person("dan", server, folder)
            #expect(try await alice.run(["accounts", "add", "Joint", "--currency", "EUR"]).status == 0)
            #expect(try await alice.run(["accounts", "share", "Joint", "--with", danName]).status == 0)
            #expect(try await alice.run(["sync"]).status == 0)
            try await Self.accept(dan)
            #expect(try await dan.run(["accounts", "add", "Cash", "--currency", "EUR"]).status == 0)

            // When Dan, offline, moves money from his own Cash into Joint while Alice makes him a viewer
            #expect(try await dan.run(["transfer", "2", "--from", "Cash", "--to", "Joint"], server: unreachableServer).status == 0)
            #expect(try await alice.run(["accounts", "role", "Joint", danName, "viewer"]).status == 0)
            let refused = try await dan.run(["sync"])
            #expect(refused.status == 1, "\(refused.stdout)\(refused.stderr)")
            let failures = try #require(try await dan.run(["failures", "--json"]).json() as? [[String: Any]])
            let side = try #require(failures.first, "\(failures)")
            #expect((side["what"] as? String ?? side["what"] as? String ?? "\(side)").contains("Cash → Joint"), "\(side)")
            // Then discarding the refused side takes back the other: no money leaves Cash for nowhere
            #expect(try await dan.run(["settle", String(try #require(side["id"] as? String).suffix(8)), "--discard"]).status == 0)
            #expect(try await Self.balances(dan) == ["Cash": 0, "Joint": 0])
            #expect(try await dan.run(["sync"]).status == 0)
            #expect(try await Shared.json(dan, ["list"]).isEmpty)

            // When, an editor again, he moves 5 into Joint, Alice can still take Joint back, and keeps what came in
            #expect(try await alice.run(["accounts", "role", "Joint", danName, "editor"]).status == 0)
            #expect(try await dan.run(["sync"]).status == 0)
            #expect(try await dan.run(["transfer", "5", "--from", "Cash", "--to", "Joint"]).status == 0)
            #expect(try await dan.run(["sync"]).status == 0)
            #expect(try await alice.run(["sync"]).status == 0)
            let unshared = try await alice.run(["accounts", "unshare", "Joint"])
            #expect(unshared.status == 0, "\(unshared.stderr)")
            #expect(try await Self.balances(alice) == ["Joint": 500])
            #expect(try await dan.run(["sync"]).status == 0)
            #expect(try await Self.balances(dan) == ["Cash": -500])

            // And once he is removed, sharing with him again invites him again, and "with" says where it stands
            #expect(try await alice.run(["accounts", "add", "Trip", "--currency", "EUR"]).status == 0)
            #expect(try await alice.run(["accounts", "share", "Trip", "--with", danName]).status == 0)
            #expect(try await alice.run(["accounts", "remove", "Trip", danName]).status == 0)
            #expect(try await alice.run(["sync"]).status == 0)
            let trip = try #require(try await Self.account(alice, "Trip")["shared"] as? [String: Any])
            #expect(trip["with"] as? [String] == [] && trip["invited"] as? [String] == [], "\(trip)")
            let again = try await alice.run(["accounts", "share", "Trip", "--with", danName])
            #expect(again.status == 0 && !again.stdout.contains("already"), "\(again.stdout)\(again.stderr)")
            #expect(try await alice.run(["sync"]).status == 0)
            try await Self.accept(dan)
            #expect(Set(try await Shared.json(dan, ["accounts"]).compactMap { $0["name"] as? String }).contains("Trip"))
        }
    }

    @Test(arguments: Backend.available)
    func aTransferBetweenYourOwnAccountAndASharedOneIsOneTransferWithEachSideInItsSpace(_ backend: Backend) async throws {
        try await Shared.withServer(backend) { server, folder in
            let (alice, _) = try await Shared.person("alice", server, folder)
            let (dan, danName) = try await Shared.person("dan", server, folder)
            for name in ["Cash", "Joint", "Savings"] {
                #expect(try await alice.run(["accounts", "add", name, "--currency", "EUR"]).status == 0)
            }
            // A transfer between two of her own accounts, before one of them is shared
            #expect(try await alice.run(["transfer", "7", "--from", "Cash", "--to", "Savings"]).status == 0)
            #expect(try await alice.run(["accounts", "share", "Joint", "--with", danName]).status == 0)
            #expect(try await alice.run(["sync"]).status == 0)
            try await Self.accept(dan)

            // Money put into the joint account from her own: one transfer for her, its side for dan
            let moved = try await alice.run(["transfer", "50", "--from", "Cash", "--to", "Joint"])
            #expect(moved.status == 0 && moved.stdout.contains("Moved EUR 50.00 from Cash to Joint"), "\(moved.stdout)\(moved.stderr)")
            #expect(try await alice.run(["sync"]).status == 0)
            #expect(try await dan.run(["sync"]).status == 0)
            #expect(try await Self.balances(alice).filter { ["Cash", "Joint"].contains($0.key) } == ["Cash": -5700, "Joint": 5000])
            #expect(try await Self.balance(dan, "Joint") == 5000)
            let alicesList = try await Shared.json(alice, ["list"])
            #expect(alicesList.filter { $0["kind"] as? String == "transfer" }.count == 2, "\(alicesList)")
            #expect(try await Shared.json(dan, ["list"]).count == 1)

            // Savings shared later: the earlier transfer splits, each account keeps its side
            #expect(try await alice.run(["accounts", "share", "Savings", "--with", danName]).status == 0)
            #expect(try await alice.run(["sync"]).status == 0)
            #expect(try await dan.run(["sync"]).status == 0)
            #expect(try await Self.balances(alice).filter { ["Cash", "Savings"].contains($0.key) } == ["Cash": -5700, "Savings": 700])
            #expect(try await Self.balance(dan, "Savings") == 700)
            #expect(try await Shared.json(alice, ["list"]).filter { $0["kind"] as? String == "transfer" }.count == 2)

            // Taking Joint back keeps every balance; deleting the transfer deletes both sides
            #expect(try await alice.run(["accounts", "unshare", "Joint"]).status == 0)
            #expect(try await Self.balances(alice).filter { ["Cash", "Joint"].contains($0.key) } == ["Cash": -5700, "Joint": 5000])
            let id = try #require(try await Shared.json(alice, ["list"]).first { $0["amountMinor"] as? Int == 5000 }?["id"] as? String)
            #expect(try await alice.run(["delete", String(id.suffix(8))]).status == 0)
            #expect(try await Self.balances(alice).filter { ["Cash", "Joint"].contains($0.key) } == ["Cash": -700, "Joint": 0])
            #expect(try await alice.run(["sync"]).status == 0)
            #expect(try await dan.run(["sync"]).status == 0)
            #expect(Set(try await Shared.json(dan, ["accounts"]).compactMap { $0["name"] as? String }) == ["Savings"])
        }
    }
}
