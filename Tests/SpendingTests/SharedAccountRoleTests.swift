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
}
