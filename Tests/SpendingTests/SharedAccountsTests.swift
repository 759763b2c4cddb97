import EventualAPI
import EventualKit
import EventualServer
import Foundation
import Testing
@testable import Spending

@Suite("Shared accounts through the spendiq command, on SQLite and PostgreSQL", .timeLimit(.minutes(6)), .tags(.endToEnd))
struct SharedAccountsTests {
    /// A live server on a scratch database of `backend`, its mail in `folder/mail`.
    static func withServer(_ backend: Backend, configure: (inout ServerConfiguration) -> Void = { _ in },
                           _ body: @Sendable (URL, ScratchFolder) async throws -> Void) async throws {
        let folder = try ScratchFolder("spendiq-sharing")
        defer { folder.remove() }
        try await withLiveServer(on: backend, configure: {
            $0.mail = .directory(folder.url.appendingPathComponent("mail").path)
            configure(&$0)
        }) { server, _ in try await body(server, folder) }
    }

    /// A person registered, verified and signed in through the command on their own device.
    static func person(_ name: String, _ server: URL, _ folder: ScratchFolder) async throws -> (device: CommandProcess, username: String) {
        let device = CommandProcess.spendiq(dataDirectory: folder.folder(name), server: server)
        let (_, username) = try await device.signUp(name: name) { email in
            let verified = try await device.run(["verify", try mailedCode(folder, to: email)])
            #expect(verified.status == 0, "\(verified.stderr)")
        }
        return (device, username)
    }

    /// The invitation waiting for a device's person (there must be exactly one).
    static func onlyInvitation(_ device: CommandProcess) async throws -> [String: Any] {
        let listed = try await device.run(["invitations", "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let invitations = try #require((try listed.json() as? [String: Any])?["invitations"] as? [[String: Any]])
        try #require(invitations.count == 1, "\(listed.stdout)")
        return invitations[0]
    }

    /// The changes of records in a device's outbox, waiting or refused (the calls every start queues left out).
    static func changesWaiting(_ device: CommandProcess) async throws -> [[String: Any]] {
        let status = try #require(try await device.run(["status", "--json"]).json() as? [String: Any])
        let entries = try #require(status["entries"] as? [[String: Any]], "\(status)")
        return entries.filter { ($0["what"] as? String).map { $0.hasPrefix("transaction ") || $0.hasPrefix("account ") } ?? true }
    }

    static func json(_ device: CommandProcess, _ arguments: [String]) async throws -> [[String: Any]] {
        let outcome = try await device.run(arguments + ["--json"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        return try #require(try outcome.json() as? [[String: Any]], "\(outcome.stdout)")
    }

    @Test(arguments: Backend.available)
    func aSharedAccountIsSeenAndRecordedInByBothWithWhoRecordedEach(_ backend: Backend) async throws {
        try await Self.withServer(backend) { server, folder in
            // Given Alice's account with a transaction, and Bob
            let (alice, aliceName) = try await Self.person("alice", server, folder)
            let (bob, bobName) = try await Self.person("bob", server, folder)
            #expect(try await alice.run(["accounts", "add", "Home", "--currency", "EUR"]).status == 0)
            #expect(try await alice.run(["accounts", "add", "Mine", "--currency", "EUR"]).status == 0)
            #expect(try await alice.run(["add", "expense", "40", "--account", "Home", "--category", "food"]).status == 0)
            #expect(try await alice.run(["add", "expense", "5", "--account", "Mine"]).status == 0)

            // When she shares Home with Bob, offline: it is queued and said
            let shared = try await alice.run(["accounts", "share", "Home", "--with", bobName], server: unreachableServer)
            #expect(shared.status == 0, "\(shared.stderr)")
            #expect(shared.stdout.hasPrefix("Shared Home and 1 transaction(s) with \(bobName) as editor"), "\(shared.stdout)")
            let mine = try await Self.json(alice, ["accounts"])
            let home = try #require(mine.first { $0["name"] as? String == "Home" }?["shared"] as? [String: Any])
            #expect(home["with"] as? [String] == [bobName] && home["role"] as? String == "owner")
            #expect(mine.first { $0["name"] as? String == "Mine" }?["shared"] is NSNull)
            // Sharing again with the same person, not in it yet, invites them again (nothing moves twice)
            let again = try await alice.run(["accounts", "share", "home", "--with", bobName])
            #expect(again.status == 0 && again.stdout.replacingOccurrences(of: "\n", with: " ").contains("Invited \(bobName) again to"),
                    "\(again.stdout)\(again.stderr)")
            #expect(try await alice.run(["sync"]).status == 0)

            // Offline with no list yet, Bob is told to connect, in one line
            let offline = try await bob.run(["invitations"], server: unreachableServer)
            #expect(offline.isOneLineError && offline.stderr.hasPrefix("spendiq: Connect to see the invitations waiting for you"), "\(offline.stderr)")
            // Then Bob sees the invitation, accepts it, and has the account and its transaction, recorded by Alice
            let invitation = try await Self.onlyInvitation(bob)
            #expect(invitation["invitedBy"] as? String == aliceName && invitation["role"] as? String == "editor")
            let id = try #require(invitation["id"] as? String)
            let accepted = try await bob.run(["accept", String(id.suffix(8))])
            #expect(accepted.status == 0, "\(accepted.stderr)")
            #expect(accepted.stdout.hasPrefix("Joined ") && accepted.stdout.contains("(\(aliceName)'s invitation, as editor)"), "\(accepted.stdout)")
            #expect(try await bob.run(["sync"]).status == 0)
            let bobsAccounts = try await Self.json(bob, ["accounts"])
            #expect(bobsAccounts.map { $0["name"] as? String } == ["Home"])
            #expect((bobsAccounts.first?["shared"] as? [String: Any])?["with"] as? [String] == [aliceName])
            #expect(bobsAccounts.first?["balanceMinor"] as? Int == -4000)
            let bobsList = try await Self.json(bob, ["list"])
            #expect(bobsList.count == 1 && bobsList.first?["changedBy"] as? String == aliceName && bobsList.first?["space"] is String)

            // When Bob records one, Alice sees it with his name, and hers as "you"
            #expect(try await bob.run(["add", "expense", "12", "--account", "Home", "--note", "bread"]).status == 0)
            #expect(try await bob.run(["sync"]).status == 0)
            #expect(try await alice.run(["sync"]).status == 0)
            let alicesList = try await Self.json(alice, ["list"])
            #expect(Set(alicesList.compactMap { $0["changedBy"] as? String }) == [aliceName, bobName])
            #expect(alicesList.first { $0["note"] as? String == "bread" }?["changedBy"] as? String == bobName)
            let table = try await alice.run(["list"], environment: ["COLUMNS": "80"])
            #expect(table.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(table.stdout)")
            #expect(table.stdout.split(separator: "\n").first?.hasSuffix("BY") == true, "\(table.stdout)")
            #expect(table.stdout.split(separator: "\n").contains { $0.contains("bread") && $0.hasSuffix(bobName) }, "\(table.stdout)")
            #expect(table.stdout.split(separator: "\n").contains { $0.contains("food") && $0.hasSuffix("you") }, "\(table.stdout)")

            // And the dashboard counts the shared account, with both people's spending
            let dashboard = try #require(try await alice.run(["dashboard", "--json"]).json() as? [String: Any])
            let balances = try #require(dashboard["accounts"] as? [[String: Any]])
            #expect(balances.first { $0["name"] as? String == "Home" }?["balanceMinor"] as? Int == -5200)
            let last30 = try #require(dashboard["last30Days"] as? [[String: Any]])
            #expect(last30.first?["spentMinor"] as? Int == 5700)

            // A viewer's write is refused on his device, in one line, and nothing is queued; what else he records goes through
            #expect(try await alice.run(["accounts", "add", "Trip", "--currency", "EUR"]).status == 0)
            #expect(try await alice.run(["add", "expense", "4", "--account", "Trip", "--note", "hers"]).status == 0)
            let viewer = try await alice.run(["accounts", "share", "Trip", "--with", bobName, "--role", "viewer"])
            #expect(viewer.status == 0 && viewer.stdout.contains("as viewer"), "\(viewer.stdout)\(viewer.stderr)")
            #expect(try await alice.run(["sync"]).status == 0)
            let second = try await Self.onlyInvitation(bob)
            #expect(second["role"] as? String == "viewer")
            #expect(try await bob.run(["accept", try #require(second["id"] as? String)]).status == 0)
            #expect(try await bob.run(["sync"]).status == 0)
            let hers = String(try #require(try await Self.json(bob, ["list", "--account", "Trip"]).first?["id"] as? String).suffix(8))
            let space = "\(aliceName) & \(bobName), read-only"
            for arguments in [["add", "expense", "9", "--account", "Trip"], ["add", "income", "9", "--account", "Trip"], ["edit", hers, "--amount", "5"],
                              ["edit", hers, "--account", "Home"], ["delete", hers], ["accounts", "edit", "Trip", "--name", "Holiday"],
                              ["accounts", "archive", "Trip"]] {
                let refused = try await bob.run(arguments)
                #expect(refused.isOneLineError && refused.status == 1
                        && refused.stderr == "spendiq: You can only look at Trip (viewer of \(space)): only its owner and editors change it\n",
                        "\(arguments): \(refused.stdout)\(refused.stderr)")
            }
            #expect(try await Self.changesWaiting(bob).isEmpty)
            #expect(try await Self.json(bob, ["list", "--account", "Trip"]).map { $0["amountMinor"] as? Int } == [400])
            let trip = try #require(try await Self.json(alice, ["accounts"]).first { $0["name"] as? String == "Trip" }?["shared"] as? [String: Any])
            #expect(trip["invitedAs"] as? String == "viewer" && trip["space"] as? String == space)
            #expect(try await bob.run(["add", "expense", "3", "--account", "Home"]).status == 0)
            #expect(try await bob.run(["sync"]).status == 0)
            #expect(try await Self.changesWaiting(bob).isEmpty)
            #expect(try await alice.run(["sync"]).status == 0)
            let home2 = try await Self.json(alice, ["list", "--account", "Home"])
            #expect(home2.count == 3)
        }
    }

    @Test(arguments: Backend.available)
    func aSecondAccountSharedWithSomeoneAlreadyInTheSpaceIsSaidToReachThemAtTheirNextSync(_ backend: Backend) async throws {
        try await Self.withServer(backend) { server, folder in
            // Given Alice's Joint shared with Erin, who accepted
            let (alice, aliceName) = try await Self.person("alice", server, folder)
            let (erin, erinName) = try await Self.person("erin", server, folder)
            #expect(try await alice.run(["accounts", "add", "Joint", "--currency", "EUR"]).status == 0)
            let first = try await alice.run(["accounts", "share", "Joint", "--with", erinName])
            #expect(first.stdout.replacingOccurrences(of: "\n", with: " ").contains("They see it once they accept: spendiq invitations"), "\(first.stdout)")
            #expect(try await alice.run(["sync"]).status == 0)
            #expect(try await erin.run(["accept", try #require(try await Self.onlyInvitation(erin)["id"] as? String)]).status == 0)
            #expect(try await erin.run(["sync"]).status == 0)

            // When Alice shares Savings with her too
            #expect(try await alice.run(["accounts", "add", "Savings", "--currency", "EUR"]).status == 0)
            let shared = try await alice.run(["accounts", "share", "Savings", "--with", erinName])

            // Then it says the truth: Erin is in the space already and sees it at her next sync, with no invitation to accept
            let said = shared.stdout.replacingOccurrences(of: "\n", with: " ")
            #expect(shared.status == 0 && said.contains("\(erinName) is already in \(aliceName) & \(erinName): they see it at their next sync.")
                    && !said.contains("accept"), "\(shared.stdout)\(shared.stderr)")
            #expect(shared.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(shared.stdout)")
            let invitations = try #require(try await erin.run(["invitations", "--json"]).json() as? [String: Any])
            #expect((invitations["invitations"] as? [Any])?.isEmpty == true, "\(invitations)")
            #expect(try await erin.run(["sync"]).status == 0)
            #expect(Set(try await Self.json(erin, ["accounts"]).compactMap { $0["name"] as? String }) == ["Joint", "Savings"])
        }
    }

    @Test func theSharingCommandsHaveHelpThatFits80Columns() async throws {
        let device = CommandProcess.spendiq(dataDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("help-\(UUID().uuidString)"),
                                            server: unreachableServer)
        for command in [["accounts", "share"], ["accounts", "members"], ["accounts", "role"], ["accounts", "remove"], ["accounts", "leave"],
                        ["accounts", "unshare"], ["invitations"], ["accept"], ["decline"], ["failures"], ["settle"]] {
            for help in [command + ["--help"], ["help"] + command, command + ["-h"]] {
                let outcome = try await device.run(help, environment: ["COLUMNS": "80"])
                #expect(outcome.status == 0 && outcome.stdout.contains("USAGE"), "\(help): \(outcome.stderr)")
                #expect(outcome.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(outcome.stdout)")
            }
        }
        // A role no one is given this way, and no one to share with, are usage mistakes
        let owner = try await device.run(["accounts", "share", "Cash", "--with", "bob", "--role", "owner"])
        #expect(owner.isOneLineError && owner.status == 64, "\(owner.stderr)")
        let nobody = try await device.run(["accounts", "share", "Cash"])
        #expect(nobody.isOneLineError && nobody.status == 64, "\(nobody.stderr)")
        for mistake in [["accounts", "role", "Cash", "bob", "king"], ["accounts", "remove", "Cash"], ["settle", "1a2b3c4d", "--account", "Cash"],
                        ["settle", "1a2b3c4d", "--personal", "--discard"]] {
            let refused = try await device.run(mistake)
            #expect(refused.isOneLineError && refused.status == 64, "\(mistake): \(refused.stderr)")
        }
    }

    @Test(arguments: Backend.available)
    func aWipedDeviceLosesItsCopyOfASharedAccountAndTheOtherMemberKeepsIt(_ backend: Backend) async throws {
        try await Self.withServer(backend) { server, folder in
            // Given Alice who shared an account with Bob, who accepted and recorded in it
            let alice = try await SpendingUser.verified(on: server, scratch: folder, name: "alice")
            let bob = try await SpendingUser.verified(on: server, scratch: folder, name: "bob")
            let clock = TestClock()
            let bobsFolder = folder.folder("bob-phone")
            let alices = try await spendingDevice(folder.folder("alice-phone"), server: server).login(email: alice.email, password: alice.password).spending
            _ = try await alices.ledger.addAccount(name: "Home", currency: "EUR")
            _ = try await alices.record(.expense, TransactionDetails(amount: "20", account: "Home"))
            // A transfer into it from an account she keeps to herself: its side goes with it, so both see one balance
            _ = try await alices.ledger.addAccount(name: "Cash", currency: "EUR")
            _ = try await alices.ledger.transfer("50", from: "Cash", to: "Home")
            let shared = try await alices.sharing.share("Home", with: bob.email)
            #expect(shared.movedTransactions == 2 && !shared.already)
            #expect(await alices.device.sync().failure == nil)
            #expect(try alices.failures().isEmpty)
            // A later transfer between a shared account and one of hers alone is two linked sides, one in each space
            let later = try await alices.ledger.transfer("5", from: "Cash", to: "Home")
            #expect(later.leg == .out && later.space == nil)
            #expect(await alices.device.sync().failure == nil)
            let bobs = try await spendingDevice(bobsFolder, server: server, clock: clock).login(email: bob.email, password: bob.password).spending
            let invitation = try #require(try await bobs.spaces.invitations().value.waiting.first)
            try await bobs.spaces.accept(invitation.id)
            #expect(await bobs.device.sync().failure == nil)
            #expect(await bobs.device.sync().failure == nil)
            _ = try await bobs.record(.expense, TransactionDetails(amount: "7", account: "Home"))
            #expect(await bobs.device.sync().failure == nil)
            #expect(try bobs.ledger.transactions().count == 4)
            #expect(try bobs.ledger.balances().map(\.balanceMinor) == [5000 + 500 - 2000 - 700])

            // When Bob's phone stays offline past seven days, its data is wiped at the next start
            clock.advance(.seconds(8 * 24 * 3600))
            await #expect(throws: SpendingError.wipedAfterOfflineAge(days: 7)) {
                try await spendingDevice(bobsFolder, server: unreachableServer, clock: clock).open()
            }

            // Then Alice still has the account and both transactions, and so does the server
            #expect(await alices.device.sync().failure == nil)
            #expect(try alices.ledger.accounts().map(\.name) == ["Cash", "Home"])
            #expect(try alices.ledger.transactions().count == 4)
            #expect(try alices.ledger.balances().map(\.balanceMinor) == [-5000 - 500, 5000 + 500 - 2000 - 700])
            let back = try await spendingDevice(bobsFolder, server: server, clock: clock).login(email: bob.email, password: bob.password).spending
            #expect(try back.ledger.accounts().map(\.name) == ["Home"] && back.ledger.transactions().count == 4)
        }
    }
}

@Suite("A household is the pantry's and a shared account SpendiQ's, through both commands", .timeLimit(.minutes(6)), .tags(.endToEnd))
struct SpacePerAppTests {
    @Test(arguments: Backend.available)
    func eachAppListsJoinsAndShowsOnlyItsOwnSpaces(_ backend: Backend) async throws {
        try await SharedAccountsTests.withServer(backend) { server, folder in
            // Given Alice and Dan, each with SpendiQ and the pantry signed in to one account
            let (aliceSpendiq, alice) = try await SharedAccountsTests.person("alice", server, folder)
            let (danSpendiq, dan) = try await SharedAccountsTests.person("dan", server, folder)
            func pantry(_ name: String, _ username: String) async throws -> CommandProcess {
                let device = CommandProcess.pantry(dataDirectory: folder.folder("\(name)-pantry"), server: server)
                let email = "\(username.replacingOccurrences(of: "_", with: "."))@example.com"
                let login = try await device.run(["login", "--email", email, "--password-stdin"], input: "long-password\n")
                #expect(login.status == 0, "\(login.stderr)")
                return device
            }
            let alicePantry = try await pantry("alice", alice), danPantry = try await pantry("dan", dan)
            // And Alice's household Cabin and her account Joint, each shared with Dan
            for arguments in [["household", "create", "Cabin"], ["household", "invite", dan], ["sync"]] {
                let outcome = try await alicePantry.run(arguments)
                #expect(outcome.status == 0, "pantry \(arguments): \(outcome.stderr)")
            }
            #expect(try await aliceSpendiq.run(["accounts", "add", "Joint", "--currency", "EUR"]).status == 0)
            let shared = try await aliceSpendiq.run(["accounts", "share", "Joint", "--with", dan])
            #expect(shared.status == 0, "\(shared.stderr)")
            // When Dan looks in each app, each shows its own invitation only
            let pantryInvitations = try #require(try await danPantry.run(["household", "invitations", "--json"]).json() as? [String: Any])
            let households = (pantryInvitations["invitations"] as? [[String: Any]])?.compactMap { $0["space"] as? String }
            #expect(households == ["Cabin"], "\(pantryInvitations)")
            let account = try await SharedAccountsTests.onlyInvitation(danSpendiq)
            #expect((account["space"] as? String)?.contains("Cabin") == false, "\(account)")
            // And the pantry cannot answer SpendiQ's invitation, even given its whole id
            let crossed = try await danPantry.run(["household", "accept", try #require(account["id"] as? String)])
            #expect(crossed.status != 0, "\(crossed.stdout)")
            #expect(try await SharedAccountsTests.onlyInvitation(danSpendiq)["id"] as? String == account["id"] as? String)
            // And once he joined both, the pantry lists the household and SpendiQ the account, neither the other's
            let id = try #require((pantryInvitations["invitations"] as? [[String: Any]])?.first?["id"] as? String)
            #expect(try await danPantry.run(["household", "accept", String(id.suffix(8))]).status == 0)
            #expect(try await danSpendiq.run(["accept", String((account["id"] as? String ?? "").suffix(8))]).status == 0)
            _ = try await danPantry.run(["sync"])
            _ = try await danSpendiq.run(["sync"])
            let listed = try await danPantry.run(["household"])
            #expect(listed.stdout.contains("Cabin") && !listed.stdout.contains("& "), "\(listed.stdout)")
            let roleInOther = try await danPantry.run(["household", "leave", try #require(account["space"] as? String)])
            #expect(roleInOther.status != 0, "\(roleInOther.stdout)")
            let accounts = try await danSpendiq.run(["accounts"])
            #expect(accounts.stdout.contains("Joint") && !accounts.stdout.contains("Cabin"), "\(accounts.stdout)")
        }
    }
}

extension SharedAccountsTests {
    /// A stranger's week found "Invited dave again … (an earlier invitation is replaced)" for
    /// someone never invited before: "again" is said only of who was.
    @Test func sharingWithSomeoneNewIntoAnAccountsSpaceDoesNotSayAgain() async throws {
        try await Self.withServer(.sqlite) { server, folder in
            // Given Alice's account shared with Bob, who has not answered yet
            let (alice, _) = try await Self.person("alice", server, folder)
            let (_, bobName) = try await Self.person("bob", server, folder)
            #expect(try await alice.run(["accounts", "add", "Wallet", "--currency", "EUR"]).status == 0)
            #expect(try await alice.run(["accounts", "share", "Wallet", "--with", bobName]).status == 0)
            #expect(try await alice.run(["sync"]).status == 0)
            // When she shares it with Dave too, in a basement
            let shared = try await alice.run(["accounts", "share", "Wallet", "--with", "dave@example.com"], server: unreachableServer)
            // Then Dave is invited, not invited "again"; and Bob, invited again, is
            #expect(shared.status == 0 && !shared.stdout.contains("again") && !shared.stdout.contains("replaced"), "\(shared.stdout)\(shared.stderr)")
            let again = try await alice.run(["accounts", "share", "Wallet", "--with", bobName], server: unreachableServer)
            #expect(again.status == 0 && again.stdout.contains("again"), "\(again.stdout)\(again.stderr)")
        }
    }
}
