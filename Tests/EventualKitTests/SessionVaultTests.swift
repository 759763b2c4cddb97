import EventualAPI
import Foundation
import Synchronization
import Testing
@testable import EventualKit

@Suite("Session vault", .timeLimit(.minutes(2)))
struct SessionVaultTests {
    @Test func onlineSignInThenOfflineUnlockWithinSevenDays() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let user = try await registerUser(port: port)
            let wall = ManualClock(UnixMillis.now())
            let secrets = FileSecretStore(directory: scratch.url.appendingPathComponent("secrets"))
            let vault = SessionVault(secrets: secrets, rounds: 100_000, wallClock: { wall.now })
            let link = ServerLink(serverURL: URL(string: "http://127.0.0.1:\(port)")!, timeouts: .patient) { vault.accessToken }
            // Given an online sign-in
            let session = try await vault.signIn(email: user.email, password: user.password, client: link.client)
            #expect(session.accessToken != nil)
            // When the device is offline six days later, in a new process
            wall.advance(by: 6 * 86_400_000)
            let later = SessionVault(secrets: secrets, rounds: 100_000, wallClock: { wall.now })
            // Then the password unlocks it, a wrong one does not
            await #expect(throws: SessionError.wrongCredentials) { try await later.unlockOffline(email: user.email, password: "wrong-password") }
            #expect(try await later.unlockOffline(email: user.email.uppercased(), password: user.password).userID == session.userID)
            // And past seven days it asks for the network
            wall.advance(by: 2 * 86_400_000)
            await #expect(throws: SessionError.offlineSignInExpired(days: 7)) {
                try await later.unlockOffline(email: user.email, password: user.password)
            }
        }
    }

    @Test func theSecretFileIsOwnerOnlyAndHoldsNoPassword() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let user = try await registerUser(port: port)
            let folder = scratch.url.appendingPathComponent("secrets")
            let vault = SessionVault(secrets: FileSecretStore(directory: folder), rounds: 100_000)
            let link = ServerLink(serverURL: URL(string: "http://127.0.0.1:\(port)")!, timeouts: .patient) { vault.accessToken }
            try await vault.signIn(email: user.email, password: user.password, client: link.client)
            let file = folder.appendingPathComponent(SessionVault.sessionSecret)
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(!text.contains(user.password))
        }
    }

    @Test func aWrongPasswordOnlineIsRefused() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let user = try await registerUser(port: port)
            let vault = SessionVault(secrets: FileSecretStore(directory: scratch.url), rounds: 100_000)
            let link = ServerLink(serverURL: URL(string: "http://127.0.0.1:\(port)")!, timeouts: .patient) { vault.accessToken }
            await #expect(throws: SessionError.wrongCredentials) {
                try await vault.signIn(email: user.email, password: "not-the-password", client: link.client)
            }
            #expect(vault.session == nil)
        }
    }

    @Test func aTamperedOrMissingSecretFileGivesAClearAnswer() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let secrets = FileSecretStore(directory: scratch.url)
        let vault = SessionVault(secrets: secrets, rounds: 100_000)
        await #expect(throws: SessionError.noOfflineSession) { try await vault.unlockOffline(email: "a@b.co", password: "whatever1") }
        try secrets.write(SessionVault.sessionSecret, Data("{\"userID\": 12".utf8))
        await #expect(throws: SessionError.corruptSecret("unreadable session file")) {
            try await vault.unlockOffline(email: "a@b.co", password: "whatever1")
        }
    }

    @Test func aTamperedVerifierDoesNotUnlock() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let user = try await registerUser(port: port)
            let secrets = FileSecretStore(directory: scratch.url.appendingPathComponent("s"))
            let vault = SessionVault(secrets: secrets, rounds: 100_000)
            let link = ServerLink(serverURL: URL(string: "http://127.0.0.1:\(port)")!, timeouts: .patient) { vault.accessToken }
            try await vault.signIn(email: user.email, password: user.password, client: link.client)
            // When someone edits the stored hash
            var json = try JSONSerialization.jsonObject(with: try #require(try secrets.read(SessionVault.sessionSecret))) as! [String: Any]
            var verifier = json["verifier"] as! [String: Any]
            verifier["hash"] = Data(repeating: 7, count: 32).base64EncodedString()
            json["verifier"] = verifier
            try secrets.write(SessionVault.sessionSecret, try JSONSerialization.data(withJSONObject: json))
            // Then the right password no longer unlocks
            await #expect(throws: SessionError.wrongCredentials) { try await vault.unlockOffline(email: user.email, password: user.password) }
        }
    }

    @Test func signOutIsRefusedWhileChangesArePendingUnlessForced() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let user = try await registerUser(port: port)
            let vault = SessionVault(secrets: FileSecretStore(directory: scratch.url.appendingPathComponent("s")), rounds: 100_000)
            let link = ServerLink(serverURL: URL(string: "http://127.0.0.1:\(port)")!, timeouts: .patient) { vault.accessToken }
            try await vault.signIn(email: user.email, password: user.password, client: link.client)
            // When 3 changes still wait
            await #expect(throws: SessionError.pendingChanges(count: 3)) {
                _ = try await vault.signOut(pendingChanges: 3, force: false) { _ in }
            }
            // Then the user stays signed in, and a forced sign-out says how many are dropped
            #expect(vault.session != nil)
            let discarded = try await vault.signOut(pendingChanges: 3, force: true) { _ in }
            #expect(discarded == 3)
            #expect(vault.session == nil)
            #expect(try vault.saved() == nil)
        }
    }

    @Test func anOfflineSignOutQueuesTheRevocationAndSendsItLater() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let user = try await registerUser(port: port)
            let vault = SessionVault(secrets: FileSecretStore(directory: scratch.url.appendingPathComponent("s")), rounds: 100_000)
            let link = ServerLink(serverURL: URL(string: "http://127.0.0.1:\(port)")!, timeouts: .patient) { vault.accessToken }
            let token = try #require(try await vault.signIn(email: user.email, password: user.password, client: link.client).accessToken)
            // When signing out with no network
            try await vault.signOut { _ in throw RemoteFailure.unreachable("offline") }
            // Then the session is gone at once and the revocation waits
            #expect(vault.session == nil)
            #expect(try vault.saved() == nil)
            #expect(try vault.pendingRevocations() == [token])
            // And once online it is sent, and the server refuses the token
            let revoker = ServerLink(serverURL: URL(string: "http://127.0.0.1:\(port)")!, timeouts: .patient) { nil }
            try await vault.flushRevocations { token in
                let answer = try await BearerMiddleware.$tokenOverride.withValue(token) { try await revoker.client.logout() }
                guard case .noContent = answer else { throw RemoteFailure.transient(status: 0, message: "\(answer)") }
            }
            #expect(try vault.pendingRevocations().isEmpty)
            let me = try await BearerMiddleware.$tokenOverride.withValue(token) { try await revoker.client.getMe() }
            guard case .unauthorized = me else { Issue.record("token still accepted: \(me)"); return }
        }
    }
}
