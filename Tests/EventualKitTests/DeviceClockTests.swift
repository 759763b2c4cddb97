import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

/// The server's time as the engine knows it across processes: saved from every answer, trusted in
/// a later process within the hour while the device's clock runs on from it.
@Suite("The device clock: the server's time, kept for the next process")
struct DeviceClockTests {
    static let twoHours: Int64 = 7_200_000

    @Test func aSavedOffsetIsTrustedWithinTheHourWhileTheClockRunsOn() async throws {
        // Given an offset learned ten minutes ago: the device's clock two hours fast
        let store = try LocalStore(writer: DatabaseQueue())
        let now = UnixMillis.now()
        try await store.write { tx in try DeviceClock.carryOver(offset: -Self.twoHours, learnedAt: now - 600_000, tx.db) }
        // Then a clock that ran on from it trusts it: the best known time is the server's
        let runOn = DeviceClock(store: store, wallClock: { now })
        #expect(runOn.offset() == -Self.twoHours && runOn.now() == now - Self.twoHours && runOn.deviceAheadBySeconds() == 7_200)
        // And a clock set back since, or run on for more than an hour, does not
        for moved in [now - 700_000, now + 3_600_000] {
            let clock = DeviceClock(store: store, wallClock: { moved })
            #expect(clock.offset() == nil && clock.now() == moved && clock.deviceAheadBySeconds() == nil)
        }
        // And an answer in this process wins over any saved offset; within 5 s the clock is left alone
        let told = DeviceClock(store: store, wallClock: { now }, serverNow: { now + 1_000 })
        #expect(told.offset() == 1_000 && told.now() == now && told.deviceAheadBySeconds() == nil)
        // And an older offset carried over does not replace a newer one
        try await store.write { tx in try DeviceClock.carryOver(offset: 42, learnedAt: now - 900_000, tx.db) }
        #expect(runOn.offset() == -Self.twoHours)
    }

    @Test(.timeLimit(.minutes(2)))
    func anAnswerIsRememberedByTheEngineForTheNextProcess() async throws {
        try await withLiveServer { server, scratch in
            // Given a signed-in device whose clock runs two hours fast
            let fast: @Sendable () -> Int64 = { UnixMillis.now() + Self.twoHours }
            let user = try await registerUser(port: try #require(server.port))
            let accounts = DeviceAccounts(configuration: testConfiguration(scratch.folder("phone"), server: server), app: testApp())
            let (session, _) = try await accounts.signIn(email: user.email, password: user.password)
            let device = try SignedInDevice(session: session, accounts: accounts, wallClock: fast)
            // When an answer comes (a status's probe), with no call of the app's to save it
            _ = try await device.status()
            // Then the device knows the server's time now
            #expect(abs(device.clock.now() - UnixMillis.now()) < 5_000)
            // And a next process with the clock still fast trusts it without asking the server
            let path = accounts.configuration.databasePath(session.userID)
            let next = DeviceClock(store: try LocalStore(path: path, wallClock: fast))
            #expect(next.serverNow() == nil)
            #expect(abs(try #require(next.offset()) + Self.twoHours) < 5_000)
            #expect(abs(next.now() - UnixMillis.now()) < 5_000 && next.deviceAheadBySeconds().map { abs($0 - 7_200) < 5 } == true)
            // And one whose clock was set right since does not move its time by the old error
            let corrected = DeviceClock(store: try LocalStore(path: path))
            #expect(corrected.offset() == nil && abs(corrected.now() - UnixMillis.now()) < 5_000)
        }
    }

    @Test func anOffsetSavedBeforeTheClockTableIsResumedByStampsButNotTrusted() async throws {
        // Given a store from before the engine kept the moment an offset was learned
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let path = folder.url.appendingPathComponent("store.sqlite").path
        _ = try LocalStore(path: path)
        try await DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                DROP TABLE eventual_server_clock;
                DELETE FROM grdb_migrations WHERE identifier = 'eventual-engine-10-server-clock';
                INSERT INTO eventual_state (key, value) VALUES ('serverClockOffset', '-7200000');
                """)
        }
        // When the new version opens it
        let now = UnixMillis.now()
        let store = try LocalStore(path: path, wallClock: { now })
        // Then stamps go on by the offset, as they did, but the device clock does not trust it: its moment is unknown
        #expect(store.clock.serverOffset == -Self.twoHours && store.clock.now() == now - Self.twoHours)
        #expect(DeviceClock(store: store).offset() == nil)
    }
}
