import EventualKit
import Foundation
import Testing
@testable import Pantry

@Suite("Accounts: register, sign in online and offline, sign out", .timeLimit(.minutes(2)))
struct AccountTests {
    @Test func registeredUserSignsInOnlineAndIsWhoami() async throws {
        try await withLiveServer { server, scratch in
            // Given a registered user
            let user = try await TestUser.register(on: server)
            let app = device(scratch.folder("phone"), server: server)
            // When they sign in
            let signIn = try await app.login(email: user.email, password: user.password)
            // Then it went through the server and whoami names them
            #expect(signIn.online)
            #expect(try await app.whoami()?.username == user.username)
            #expect(try await app.open().session.accessToken != nil)
        }
    }

    @Test func wrongPasswordIsRefused() async throws {
        try await withLiveServer { server, scratch in
            let user = try await TestUser.register(on: server)
            let app = device(scratch.folder("phone"), server: server)
            await #expect(throws: SessionError.wrongCredentials) {
                try await app.login(email: user.email, password: "not-the-password")
            }
            #expect(try await app.whoami() == nil)
        }
    }

    @Test func afterOneOnlineSignInTheUserSignsInOffline() async throws {
        try await withLiveServer { server, scratch in
            // Given a user who signed in online on this device
            let user = try await TestUser.register(on: server)
            let folder = scratch.folder("phone")
            _ = try await device(folder, server: server).login(email: user.email, password: user.password)
            // When they sign in again with no server
            let offline = device(folder, server: unreachableServer)
            let signIn = try await offline.login(email: user.email, password: user.password)
            // Then the password was checked on the device
            #expect(!signIn.online)
            #expect(signIn.pantry.session.username == user.username)
            // And a wrong password is still refused offline
            await #expect(throws: SessionError.wrongCredentials) {
                try await offline.login(email: user.email, password: "wrong-password")
            }
        }
    }

    @Test func offlineSignInWithoutAnEarlierOnlineOneIsRefused() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let app = device(scratch.folder("phone"), server: unreachableServer)
        await #expect(throws: SessionError.noOfflineSession) {
            try await app.login(email: "nobody@example.com", password: "whatever-pass")
        }
    }

    @Test func signOutIsRefusedWhileChangesWaitUnlessForced() async throws {
        try await withLiveServer { server, scratch in
            // Given a signed-in user with an item added offline
            let user = try await TestUser.register(on: server)
            let folder = scratch.folder("phone")
            _ = try await device(folder, server: server).login(email: user.email, password: user.password)
            let offline = device(folder, server: unreachableServer)
            try await offline.open().items.add(ItemDetails(name: "Bread"))
            // When they sign out
            await #expect(throws: SessionError.unsentChanges(waiting: 1, refused: 0)) { try await offline.logout() }
            // Then forcing it discards the change, removes the data and queues the revocation
            let outcome = try await offline.logout(discarding: .everything)
            #expect(outcome.discarded == 1)
            #expect(outcome.revocationQueued)
            #expect(try await offline.whoami() == nil)
            await #expect(throws: PantryError.notSignedIn) { try await offline.open() }
            let users = offline.configuration.dataDirectory.appendingPathComponent("users").path
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: users)) ?? []).isEmpty)
        }
    }

    @Test func queuedRevocationIsSentAtTheNextOnlineSignIn() async throws {
        try await withLiveServer { server, scratch in
            // Given a user who signed out offline
            let user = try await TestUser.register(on: server)
            let folder = scratch.folder("phone")
            _ = try await device(folder, server: server).login(email: user.email, password: user.password)
            _ = try await device(folder, server: unreachableServer).logout()
            #expect(try device(folder, server: server).vault.pendingRevocations().count == 1)
            // When they sign in online again
            let app = device(folder, server: server)
            _ = try await app.login(email: user.email, password: user.password)
            // Then the server heard of the sign-out
            #expect(try app.vault.pendingRevocations().isEmpty)
        }
    }

    @Test func registeringATakenEmailSaysSo() async throws {
        try await withLiveServer { server, scratch in
            let user = try await TestUser.register(on: server)
            let app = device(scratch.folder("phone"), server: server)
            await #expect(throws: PantryError.self) {
                try await app.register(username: "other_\(UUID().uuidString.prefix(6))", email: user.email, password: "long-password")
            }
        }
    }
}
