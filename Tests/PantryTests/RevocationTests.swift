import EventualAPI
import EventualKit
import Foundation
import Testing
@testable import Pantry

/// A sign-out made offline reaches the server with the next request that does, whatever it is
/// and whoever is signed in (or nobody): the token does not stay valid for 7 days.
@Suite("Offline sign-outs reach the server with any command", .timeLimit(.minutes(2)))
struct RevocationTests {
    /// Whether the server still takes `token`.
    func serverTakes(_ token: String, server: URL) async throws -> Bool {
        let link = ServerLink(serverURL: server, timeouts: .patient) { token }
        if case .ok = try await link.client.getMe() { return true }
        return false
    }

    @Test func aRegistrationWhileNobodyIsSignedInSendsTheQueuedSignOut() async throws {
        try await withLiveServer { server, scratch in
            // Given a person who signed out offline
            let user = try await TestUser.register(on: server)
            let folder = scratch.folder("phone")
            let token = try #require(try await device(folder, server: server).login(email: user.email, password: user.password).pantry.session.accessToken)
            _ = try await device(folder, server: unreachableServer).logout()
            #expect(try await serverTakes(token, server: server))
            // When someone registers on the device, signed in as nobody
            let app = device(folder, server: server)
            _ = try await app.register(username: "new_\(UUID().uuidString.prefix(6).lowercased())",
                                       email: "new.\(UUID().uuidString.prefix(6).lowercased())@example.com", password: "long-password")
            // Then the server heard of the sign-out
            #expect(try app.vault.pendingRevocations().isEmpty)
            #expect(try await serverTakes(token, server: server) == false)
        }
    }

    @Test(.tags(.endToEnd)) func anyPantryCommandThatReachesTheServerSendsTheQueuedSignOut() async throws {
        try await withLiveServer { server, scratch in
            // Given a device signed out offline through the command
            let (pantry, email) = try await signedInProcess(server, scratch)
            let token = try CommandLineSecrecyTests.savedToken(in: pantry.dataDirectory)
            let logout = try await pantry.run(["logout"], server: unreachableServer)
            #expect(logout.stdout.contains("The server will hear of it"), "\(logout.stderr)")
            // When the next command reaches the server: a failed sign-in of the same person
            let wrong = try await pantry.run(["login", "--email", email, "--password-stdin"], input: "wrong-password\n")
            #expect(wrong.status == 1)
            // Then the token is refused from then on
            #expect(try await serverTakes(token, server: server) == false)
        }
    }
}
