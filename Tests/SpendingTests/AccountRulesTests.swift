import EventualAPI
import EventualKit
import EventualServer
import Foundation
import Testing
@testable import Spending

@Suite("SpendiQ account rules: 7 days offline, one person per device, last seen, verified email", .timeLimit(.minutes(4)))
struct AccountRulesTests {
    static let week: Duration = .seconds(7 * 24 * 3600)

    @Test func afterSevenDaysWithoutAnOnlineSignInTheDataIsWipedAtTheNextStart() async throws {
        try await withLiveServer { server, scratch in
            // Given a person who signed in online and whose work all reached the server
            let user = try await SpendingUser.verified(on: server, scratch: scratch)
            let clock = TestClock()
            let folder = scratch.folder("phone")
            let spending = try await spendingDevice(folder, server: server, clock: clock).login(email: user.email, password: user.password).spending
            _ = try await spending.ledger.addAccount(name: "Cash", currency: "EUR")
            #expect(await spending.device.sync().failure == nil)
            let database = spending.app.configuration.databasePath(spending.session.userID)
            // When six days pass offline, the app still opens
            clock.advance(.seconds(6 * 24 * 3600))
            _ = try await spendingDevice(folder, server: unreachableServer, clock: clock).open()
            // But past seven days the next start wipes the device's data
            clock.advance(.seconds(24 * 3600 + 60))
            let later = spendingDevice(folder, server: unreachableServer, clock: clock)
            await #expect(throws: SpendingError.wipedAfterOfflineAge(days: 7)) { try await later.open() }
            #expect(!FileManager.default.fileExists(atPath: database))
            #expect(try await later.whoami() == nil)
            await #expect(throws: SessionError.noOfflineSession) { try await later.login(email: user.email, password: user.password) }
            // And online the person gets everything back from the server
            let again = try await spendingDevice(folder, server: server, clock: clock).login(email: user.email, password: user.password)
            #expect(try again.spending.ledger.accounts().map(\.name) == ["Cash"])
        }
    }

    @Test func changesThatNeverReachedTheServerStopTheWipeAndThePersonIsToldToGoOnline() async throws {
        try await withLiveServer { server, scratch in
            let user = try await SpendingUser.verified(on: server, scratch: scratch)
            let clock = TestClock()
            let folder = scratch.folder("phone")
            let first = try await spendingDevice(folder, server: server, clock: clock).login(email: user.email, password: user.password).spending
            _ = try await first.ledger.addAccount(name: "Cash", currency: "EUR")
            #expect(await first.device.sync().failure == nil)
            // Given an expense written offline that never reached the server
            let offline = try await spendingDevice(folder, server: unreachableServer, clock: clock).open()
            _ = try await offline.ledger.record(.expense, TransactionDetails(amount: "4.20", account: "Cash"))
            // When eight days pass
            clock.advance(.seconds(8 * 24 * 3600))
            let later = spendingDevice(folder, server: unreachableServer, clock: clock)
            // Then nothing is wiped: the person is told to go online, offline sign-in too
            await #expect(throws: SpendingError.offlineTooLongWithPendingChanges(days: 7, count: 1, email: user.email)) { try await later.open() }
            await #expect(throws: SpendingError.offlineTooLongWithPendingChanges(days: 7, count: 1, email: user.email)) {
                try await later.login(email: user.email, password: user.password)
            }
            // And an online sign-in keeps the data and sends it
            let online = try await spendingDevice(folder, server: server, clock: clock).login(email: user.email, password: user.password).spending
            #expect(try online.ledger.transactions().map(\.amountMinor) == [420])
            #expect(await online.device.sync().failure == nil)
            let elsewhere = try await spendingDevice(scratch.folder("tablet"), server: server).login(email: user.email, password: user.password).spending
            #expect(try elsewhere.ledger.transactions().map(\.amountMinor) == [420])
        }
    }

    @Test func anotherPersonCannotSignInOfflineOnADeviceThatHoldsSomeonesData() async throws {
        try await withLiveServer { server, scratch in
            let ann = try await SpendingUser.verified(on: server, scratch: scratch, name: "ann")
            let bob = try await SpendingUser.verified(on: server, scratch: scratch, name: "bob")
            let folder = scratch.folder("phone")
            let annSpending = try await spendingDevice(folder, server: server).login(email: ann.email, password: ann.password).spending
            let annFolder = annSpending.app.configuration.userDirectory(annSpending.session.userID)
            // Bob, offline, is refused: only Ann's data lives here
            await #expect(throws: SpendingError.otherPersonOnDevice(username: ann.username)) {
                try await spendingDevice(folder, server: unreachableServer).login(email: bob.email, password: bob.password)
            }
            #expect(try await spendingDevice(folder, server: unreachableServer).whoami()?.email == ann.email)
            // Online, Bob replaces Ann (whose work is all on the server): her data leaves the device
            let bobIn = try await spendingDevice(folder, server: server).login(email: bob.email, password: bob.password)
            #expect(bobIn.online)
            #expect(!FileManager.default.fileExists(atPath: annFolder.path))
            #expect(try await spendingDevice(folder, server: server).whoami()?.email == bob.email)
        }
    }

    @Test func everyStartRecordsLastSeenQueuedOfflineAsOneEntry() async throws {
        try await withLiveServer { server, scratch in
            let user = try await SpendingUser.verified(on: server, scratch: scratch)
            let clock = TestClock()
            let folder = scratch.folder("phone")
            _ = try await spendingDevice(folder, server: server, clock: clock).login(email: user.email, password: user.password)
            // Three starts offline, a minute apart
            var last: UserSpending?
            for _ in 0..<3 {
                clock.advance(.seconds(60))
                last = try await spendingDevice(folder, server: unreachableServer, clock: clock).open()
            }
            let lastSeen = try #require(last).outbox.entries().filter { $0.operation == SpendingCalls.lastSeen }
            #expect(lastSeen.count == 1)
            // Back online, the newest start reaches the server
            let online = try await spendingDevice(folder, server: server, clock: clock).open()
            #expect(await online.device.sync().failure == nil)
            guard case .ok(let answer) = try await online.app.link.client.getSpendingAccount() else { throw TestFailure("account") }
            #expect(try answer.body.json.lastSeenAt == clock.now)
        }
    }

    @Test func anUnverifiedPersonCannotSignInToSpendiqButTheCourseEndpointsStillServeThem() async throws {
        try await withLiveServer { server, scratch in
            let user = try await SpendingUser.registered(on: server, scratch: scratch)
            let app = spendingDevice(scratch.folder("phone"), server: server)
            await #expect(throws: SpendingError.notVerified) { try await app.login(email: user.email, password: user.password) }
            #expect(try await app.whoami() == nil)
            // The course contract is unchanged: /users/me answers; the spending endpoints say why not
            let vault = SessionVault(secrets: FileSecretStore(directory: scratch.folder("probe")), rounds: 100_000)
            let link = ServerLink(serverURL: server, timeouts: .patient) { vault.accessToken }
            try await vault.signIn(email: user.email, password: user.password, client: link.client)
            guard case .ok = try await link.client.getMe() else { throw TestFailure("GET /users/me") }
            guard case .forbidden(let refusal) = try await link.client.getOffers(query: .init(near: "43.7384,7.4246")) else {
                throw TestFailure("expected 403")
            }
            #expect(try refusal.body.json.message.hasPrefix("verify your email first"))
        }
    }
}
