import EventualAPI
import EventualKit
import EventualServer
import Foundation
import Testing
@testable import Spending

/// What one person's devices say of a shared account is the same on each: the role the others
/// have in it is the server's, not the record of an invitation that only one device sent.
@Suite("SpendiQ: a shared account is said the same on each of its owner's devices", .timeLimit(.minutes(4)), .tags(.endToEnd))
struct SharedAccountRoleTests {
    @Test(arguments: Backend.available)
    func invitedAsIsTheOthersRoleOnEveryDeviceOfTheOwner(_ backend: Backend) async throws {
        try await SharedAccountsTests.withServer(backend) { server, folder in
            // Given Ann shares Home with Ben from her phone, as a viewer, and Ben joins
            let (phone, _) = try await SharedAccountsTests.person("ann", server, folder)
            let (ben, benName) = try await SharedAccountsTests.person("ben", server, folder)
            #expect(try await phone.run(["accounts", "add", "Home", "--currency", "EUR"]).status == 0)
            #expect(try await phone.run(["accounts", "share", "Home", "--with", benName, "--role", "viewer"]).status == 0)
            let invitation = try await SharedAccountsTests.onlyInvitation(ben)
            #expect(try await ben.run(["accept", try #require(invitation["id"] as? String)]).status == 0)
            #expect(try await phone.run(["sync"]).status == 0)
            // When she signs in on her laptop too
            let email = try #require((try await phone.run(["whoami", "--json"]).json() as? [String: Any])?["email"] as? String)
            let laptop = CommandProcess.spendiq(dataDirectory: folder.folder("ann-laptop"), server: server)
            #expect(try await laptop.run(["login", "--email", email, "--password-stdin"], input: "long-password\n").status == 0)
            #expect(try await laptop.run(["sync"]).status == 0)
            // Then both devices say Home is shared with Ben as a viewer, in the same words
            var said: [[String: String]] = []
            for device in [phone, laptop] {
                let home = try #require(try await SharedAccountsTests.json(device, ["accounts"]).first { $0["name"] as? String == "Home" })
                let shared = try #require(home["shared"] as? [String: Any], "\(home)")
                #expect(shared["invitedAs"] as? String == "viewer", "\(shared)")
                #expect(shared["with"] as? [String] == [benName])
                said.append(["invitedAs": shared["invitedAs"] as? String ?? "null", "role": shared["role"] as? String ?? ""])
            }
            #expect(said[0] == said[1])
        }
    }

    /// Issue 46, item 13: one's own export, read back in, adds nothing twice, and the rows of an
    /// account one only views are already there, not errors.
    @Test(arguments: Backend.available)
    func aViewerReimportingTheirOwnExportFindsEveryRowAlreadyThere(_ backend: Backend) async throws {
        try await SharedAccountsTests.withServer(backend) { server, folder in
            // Given Ben views Ann's Home, which holds one expense, and keeps his own Cash with one
            let (ann, _) = try await SharedAccountsTests.person("ann", server, folder)
            let (ben, benName) = try await SharedAccountsTests.person("ben", server, folder)
            #expect(try await ann.run(["accounts", "add", "Home", "--currency", "EUR"]).status == 0)
            #expect(try await ann.run(["add", "expense", "40", "--account", "Home", "--note", "rent share"]).status == 0)
            #expect(try await ann.run(["accounts", "share", "Home", "--with", benName, "--role", "viewer"]).status == 0)
            let invitation = try await SharedAccountsTests.onlyInvitation(ben)
            #expect(try await ben.run(["accept", try #require(invitation["id"] as? String)]).status == 0)
            #expect(try await ben.run(["accounts", "add", "Cash", "--currency", "EUR"]).status == 0)
            #expect(try await ben.run(["add", "expense", "3.20", "--account", "Cash", "--note", "coffee"]).status == 0)
            #expect(try await ben.run(["sync"]).status == 0)
            let export = folder.url.appendingPathComponent("ben.csv")
            let exported = try await ben.run(["export", "--csv", export.path])
            #expect(exported.status == 0 && (exported.stdout + exported.stderr).contains("Exported 2 transaction(s)"), "\(exported.stdout) \(exported.stderr)")

            // When he imports it again
            let back = try await ben.run(["import", "--csv", export.path])

            // Then both rows are already there: none skipped, none added, and the command succeeds
            let said = back.stdout.replacingOccurrences(of: "\n", with: " ")
            #expect(back.status == 0 && said.contains("Imported 0 transaction(s); 2 already there"), "\(back.stdout) \(back.stderr)")
            #expect(said.contains("; 0 skipped") && !said.contains("line "), "\(said)")
            // And a row of the viewed account that is not on his device is still refused, in his role's words
            var rows = try String(contentsOf: export, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let home = try #require(rows.firstIndex { $0.contains(",Home,") })
            rows[home] = "new-row-\(UUID().uuidString.prefix(8))" + rows[home].drop { $0 != "," }
            try rows.joined(separator: "\n").write(to: export, atomically: true, encoding: .utf8)
            let refused = try await ben.run(["import", "--csv", export.path])
            let words = refused.stdout.replacingOccurrences(of: "\n", with: " ")
            #expect(words.contains("1 already there") && words.contains("viewer"), "\(refused.stdout) \(refused.stderr)")
        }
    }

    /// Issue 46's second week: a share with a mistyped name, of an account already shared with
    /// someone who had not accepted yet, was refused by the server, and undoing it took the
    /// account back from the first person: their invitation vanished, and the command said "Shared".
    @Test(arguments: Backend.available)
    func aShareWithAMistypedNameLeavesTheShareWithTheFirstPersonAsItWas(_ backend: Backend) async throws {
        try await SharedAccountsTests.withServer(backend) { server, folder in
            let (ann, _) = try await SharedAccountsTests.person("ann", server, folder)
            let (ben, benName) = try await SharedAccountsTests.person("ben", server, folder)
            #expect(try await ann.run(["accounts", "add", "Wallet", "--currency", "EUR"]).status == 0)
            #expect(try await ann.run(["add", "expense", "4", "--account", "Wallet"]).status == 0)
            #expect(try await ann.run(["accounts", "share", "Wallet", "--with", benName]).status == 0)
            // When Ann shares it again with someone who does not exist, before Ben accepted
            let typo = try await ann.run(["accounts", "share", "Wallet", "--with", "nobody-\(benName)"])
            // Then it is refused in one line, exit 1, and nothing changes
            #expect(typo.isOneLineError && typo.status == 1 && typo.stderr.contains("cannot be invited") && typo.stderr.contains("nothing was shared"),
                    "\(typo.stdout)\(typo.stderr)")
            // And the same typo made in a basement is undone at the next sync without touching Ben's share
            let queued = try await ann.run(["accounts", "share", "Wallet", "--with", "nobody2-\(benName)"], server: unreachableServer)
            #expect(queued.status == 0, "\(queued.stdout)\(queued.stderr)")
            let synced = try await ann.run(["sync"])
            #expect(synced.stdout.contains("could not be invited") && synced.stdout.contains("the share with \(benName) stays as it was"),
                    "\(synced.stdout)\(synced.stderr)")
            // And Ben's invitation still waits; once he accepts, he has the account and its expense
            let invitation = try await SharedAccountsTests.onlyInvitation(ben)
            #expect(try await ben.run(["accept", try #require(invitation["id"] as? String)]).status == 0)
            let accounts = try await SharedAccountsTests.json(ben, ["accounts"])
            #expect(accounts.contains { $0["name"] as? String == "Wallet" }, "\(accounts)")
            #expect(try await SharedAccountsTests.json(ben, ["list"]).count == 1)
            // And on Ann's side it is still shared with Ben, once she hears he accepted
            #expect(try await ann.run(["sync"]).status == 0)
            let wallet = try #require(try await SharedAccountsTests.json(ann, ["accounts"]).first { $0["name"] as? String == "Wallet" })
            #expect((wallet["shared"] as? [String: Any])?["with"] as? [String] == [benName], "\(wallet)")
        }
    }
}
