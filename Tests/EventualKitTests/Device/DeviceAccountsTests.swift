import EventualAPI
import Foundation
import Testing
@testable import EventualKit

@Suite("Device accounts: the one way to register and sign in, with each app's rules")
struct DeviceAccountsTests {
    @Test(.timeLimit(.minutes(2)))
    func offlineOnlyThePersonWhoseDataIsHereSignsInWhenThePolicySaysSo() async throws {
        try await withLiveServer { server, scratch in
            let port = server.port!
            let ann = try await registerUser(port: port, name: "ann"), bob = try await registerUser(port: port, name: "bob")
            let folder = scratch.folder("phone")
            let policy = AccountPolicy(onePersonPerDevice: true)
            let online = DeviceAccounts(configuration: testConfiguration(folder, server: server), app: testApp(policy: policy))
            _ = try await online.signIn(email: ann.email, password: ann.password)
            let annName = try #require(try await online.whoami()?.username)

            let offline = DeviceAccounts(configuration: testConfiguration(folder, server: unreachableServer), app: testApp(policy: policy))
            await #expect(throws: AccountError.otherPersonOnDevice(username: annName)) {
                try await offline.signIn(email: bob.email, password: bob.password)
            }
            #expect(try await offline.whoami()?.email == ann.email)
            let (_, wasOnline) = try await offline.signIn(email: ann.email, password: ann.password)
            #expect(!wasOnline)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func pastTheOfflineAgeTheDeviceIsWipedUnlessThePersonsChangesWait() async throws {
        try await withLiveServer { server, scratch in
            let user = try await registerUser(port: server.port!)
            let clock = HandClock()
            let policy = AccountPolicy(wipesAfterOfflineAge: true)
            let phone = scratch.folder("phone")
            let online = DeviceAccounts(configuration: testConfiguration(phone, server: server, clock: clock.function), app: testApp(policy: policy))
            let (session, _) = try await online.signIn(email: user.email, password: user.password)
            let device = try SignedInDevice(session: session, accounts: online)
            try await addItem("Milk", to: device.store)

            clock.advance(days: 8)
            let offline = DeviceAccounts(configuration: testConfiguration(phone, server: unreachableServer, clock: clock.function),
                                         app: testApp(policy: policy))
            // Given a change that never reached the server, the data stays and the person is sent online.
            await #expect(throws: AccountError.offlineTooLong(days: 7, waiting: 1, email: user.email)) { try await offline.enforceOfflineAge() }
            #expect(FileManager.default.fileExists(atPath: offline.configuration.databasePath(session.userID)))

            // Once it is on the server, the next start wipes the device.
            #expect(try await device.sync().failure == nil)
            await #expect(throws: AccountError.wipedAfterOfflineAge(days: 7)) { try await offline.enforceOfflineAge() }
            #expect(try await offline.whoami() == nil)
            #expect(!FileManager.default.fileExists(atPath: offline.configuration.userDirectory(session.userID).path))
        }
    }

    /// Apps given one data folder share the sign-in and the person's folder: a sign-out, or a
    /// sign-in as someone else, in one of them would remove the other's work with it.
    @Test(.timeLimit(.minutes(2)))
    func anotherAppsWorkInTheSameFolderIsNeverRemovedWithItsSignIn() async throws {
        try await withLiveServer { server, scratch in
            let user = try await registerUser(port: server.port!)
            let folder = scratch.folder("phone")
            func app(_ database: String, server: URL) -> DeviceAccounts {
                DeviceAccounts(configuration: testConfiguration(folder, server: server, databaseName: database), app: testApp())
            }
            let pantry = app("pantry.sqlite", server: unreachableServer)
            let (session, _) = try await app("pantry.sqlite", server: server).signIn(email: user.email, password: user.password)
            // Given the other app, on the same folder, with an item it could not send
            let other = app("other.sqlite", server: unreachableServer)
            let otherDevice = try SignedInDevice(session: session, accounts: other)
            try await addItem("Milk", to: otherDevice.store)
            #expect(try pantry.unsentCounts(session.userID).total == 0)
            // When this app signs out, or someone else signs in on it
            await #expect(throws: SessionError.otherAppsUnsent(["other": 1])) { try await pantry.signOut() }
            await #expect(throws: SessionError.otherAppsUnsent(["other": 1])) { try await pantry.signOut(discarding: .failed) }
            let stranger = try await registerUser(port: server.port!, name: "stranger")
            await #expect(throws: SessionError.otherUserHasPendingChanges(username: session.username, count: 1)) {
                try await app("pantry.sqlite", server: server).signIn(email: stranger.email, password: stranger.password)
            }
            // Then the other app's item is still there, and the person still signed in
            #expect(try await otherDevice.outbox.entries().count == 1)
            #expect(try pantry.whoami()?.id == session.userID)
            // When the other app has sent it, the sign-out goes through and removes the folder
            let otherOnline = app("other.sqlite", server: server)
            let resumed = try #require(try otherOnline.resume())
            let online = try SignedInDevice(session: resumed, accounts: otherOnline)
            let sent = try await online.sync()
            #expect(sent.failure == nil, "\(String(describing: sent.failure))")
            try await pantry.signOut()
            #expect(!FileManager.default.fileExists(atPath: pantry.configuration.userDirectory(session.userID).path))
        }
    }

    /// A sign-out with --force loses the other apps' work too, as it says.
    @Test(.timeLimit(.minutes(2)))
    func aForcedSignOutRemovesTheOtherAppsWorkToo() async throws {
        try await withLiveServer { server, scratch in
            let user = try await registerUser(port: server.port!)
            let folder = scratch.folder("phone")
            let accounts = DeviceAccounts(configuration: testConfiguration(folder, server: server), app: testApp())
            let (session, _) = try await accounts.signIn(email: user.email, password: user.password)
            let otherApp = DeviceAccounts(configuration: testConfiguration(folder, server: unreachableServer, databaseName: "other.sqlite"), app: testApp())
            let other = try SignedInDevice(session: session, accounts: otherApp)
            try await addItem("Milk", to: other.store)
            let outcome = try await accounts.signOut(discarding: .everything)
            #expect(outcome.username == session.username)
            #expect(!FileManager.default.fileExists(atPath: accounts.configuration.userDirectory(session.userID).path))
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func withoutThePolicyAStaleSignInIsLeftAlone() async throws {
        try await withLiveServer { server, scratch in
            let user = try await registerUser(port: server.port!)
            let clock = HandClock()
            let accounts = DeviceAccounts(configuration: testConfiguration(scratch.folder("phone"), server: server, clock: clock.function),
                                          app: testApp())
            _ = try await accounts.signIn(email: user.email, password: user.password)
            clock.advance(days: 30)
            try await accounts.enforceOfflineAge()
            #expect(try await accounts.whoami()?.email == user.email)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aPersonTheAppDoesNotAdmitIsSignedOutAgain() async throws {
        try await withLiveServer { server, scratch in
            let user = try await registerUser(port: server.port!)
            let accounts = DeviceAccounts(configuration: testConfiguration(scratch.folder("phone"), server: server),
                                          app: testApp(policy: AccountPolicy(admits: { _ in false })))
            await #expect(throws: AccountError.notAdmitted) { try await accounts.signIn(email: user.email, password: user.password) }
            #expect(try await accounts.whoami() == nil)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aRegistrationTheServersRulesRefuseSaysWhatWasTypedWrong() async throws {
        try await withLiveServer { server, scratch in
            let accounts = DeviceAccounts(configuration: testConfiguration(scratch.folder("phone"), server: server), app: testApp())
            do {
                _ = try await accounts.register(username: "carol", email: "carol@example.com", password: "short")
                Issue.record("a 5-character password was taken")
            } catch AccountError.invalid(let message) {
                #expect(message.hasPrefix("password must be"), "\(message)")
            }
            let account = try await accounts.register(username: "carol", email: "carol@example.com", password: "long-password")
            #expect(account.username == "carol")
            await #expect(throws: AccountError.self) {
                try await accounts.register(username: "carol", email: "carol@example.com", password: "long-password")
            }
        }
    }
}
