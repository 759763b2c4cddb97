import EventualAPI
import EventualKit
import Foundation
import GRDB
import Testing
@testable import Recycling

/// A phone whose clock was wrong and is set right, or is wrong while offline: each scan is scored
/// at the real time it was taken, never by an offset learned while the clock was otherwise.
@Suite("Scans after a device's clock changes", .timeLimit(.minutes(3)))
struct ClockCorrectionScanTests {
    static let day: Int64 = 86_400_000

    /// A phone on `server` whose clock is `skew` ms off, sharing the data folder `folder`.
    static func phone(_ folder: URL, server: URL, skew: Int64) -> RecyclingApp {
        var configuration = RecyclingConfiguration(dataDirectory: folder, serverURL: server)
        configuration.wallClock = { UnixMillis.now() + skew }
        configuration.localCommandSyncBudget = .seconds(20)
        configuration.catchUpBudget = .seconds(20)
        configuration.scanBudget = .seconds(20)
        return RecyclingApp(configuration: configuration)
    }

    @Test(.tags(.endToEnd)) func aScanRightAfterTheClockIsSetRightIsNotMovedByTheOldError() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let (email, _) = try await Phone(dataDirectory: scratch.folder("setup"), server: server).signUp()
            // Given a phone whose clock ran two days fast, which scanned online (learning the offset)
            let folder = scratch.folder("phone")
            let fast = Self.phone(folder, server: server, skew: 2 * Self.day)
            _ = try await fast.accounts.signIn(email: email, password: "long-password")
            let first = try await fast.open().scan(barcode: SharedData.pastryBarcode)
            #expect(first.scan.state == .classified && abs(first.scan.takenAt - UnixMillis.now()) < 60_000, "\(first.scan)")
            // When its clock is set right and it scans online
            let corrected = try await Self.phone(folder, server: server, skew: 0).open()
            let second = try await corrected.scan(barcode: SharedData.pastryBarcode)
            // Then the scan is taken now, not two days before
            #expect(second.scan.state == .classified, "\(second.scan)")
            #expect(abs(second.scan.takenAt - UnixMillis.now()) < 60_000, "\(second.scan.takenAt - UnixMillis.now()) ms off")
            #expect(corrected.clockAheadBySeconds() == nil)
        }
    }

    @Test(.tags(.endToEnd)) func aScanOfflineWithASlowClockIsScoredAtItsRealTime() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let (email, _) = try await Phone(dataDirectory: scratch.folder("setup"), server: server).signUp()
            let folder = scratch.folder("phone")
            // Given a phone that learned, an hour and more ago, that its clock ran two hours fast
            _ = try await Self.phone(folder, server: server, skew: 0).accounts.signIn(email: email, password: "long-password")
            let signedIn = try await Self.phone(folder, server: server, skew: 0).open()
            try await signedIn.store.write { tx in
                try DeviceClock.carryOver(offset: -7_200_000, learnedAt: UnixMillis.now() - 2 * 3_600_000, tx.db)
            }
            // When its clock is a day slow and it scans offline
            let basement = try await Self.phone(folder, server: unreachableServer, skew: -Self.day).open()
            let taken = UnixMillis.now()
            let offline = try await basement.scan(barcode: SharedData.pastryBarcode)
            #expect(offline.scan.state == .waiting)
            // And syncs online later, its clock still a day slow
            let back = try await Self.phone(folder, server: server, skew: -Self.day).open()
            let report = try await back.sync()
            #expect(report.failure == nil && report.calls == 1, "\(String(describing: report.failure))")
            // Then the scan is scored at the time it was taken, not yesterday, and listed so
            let scan = try #require(try await back.allScans().first)
            #expect(scan.state == .classified, "\(scan)")
            #expect(abs(scan.takenAt - taken) < 60_000, "\((scan.takenAt - taken) / 1000) s off")
            // And the phone knows its clock is a day behind the server's
            let behind = try #require(back.clockAheadBySeconds())
            #expect(abs(behind + 86_400) < 60, "\(behind)")
        }
    }

    @Test func aSavedOffsetIsTrustedOnlyWhileTheClockRunsOnFromIt() async throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let store = try LocalStore(path: folder.url.appendingPathComponent("clock.sqlite").path, migrations: RecyclingSchema.migrations)
        let now = UnixMillis.now()
        try await store.write { tx in try DeviceClock.carryOver(offset: -7_200_000, learnedAt: now - 600_000, tx.db) }
        // A clock that ran on ten minutes since: the offset holds, the stamp is the server's
        let runOn = ScanClock(clock: DeviceClock(store: store, wallClock: { now })).stamp()
        #expect(runOn.sure && runOn.takenAt == now - 7_200_000 && runOn.deviceTakenAt == now)
        // A clock set back two hours since: the offset is stale, the stamp is the device's, unsure
        let setBack = ScanClock(clock: DeviceClock(store: store, wallClock: { now - 7_200_000 })).stamp()
        #expect(!setBack.sure && setBack.takenAt == now - 7_200_000)
        // Sent once the server's time is known: by the offset then, never after the server's now
        let sending = ScanClock(clock: DeviceClock(store: store, wallClock: { now }, serverNow: { now + Self.day }))
        #expect(sending.sendingTime(takenAt: now - 1000, deviceTakenAt: now - 1000, sure: false) == now + Self.day - 1000)
        #expect(sending.sendingTime(takenAt: now + 2 * Self.day, deviceTakenAt: nil, sure: true) == now + Self.day)
    }

    @Test func aDeviceUpgradedWithinTheHourKeepsTrustingTheOffsetItSaved() async throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let path = folder.url.appendingPathComponent("clock.sqlite").path
        let now = UnixMillis.now()
        // Given a store of the version that kept the offset in SustainU's own table, learned ten minutes ago
        let before = try LocalStore(path: path, migrations: Array(RecyclingSchema.migrations.prefix(4)))
        try await before.write { tx in
            try tx.db.execute(sql: "INSERT INTO device_clock (id, offset_ms, learned_at) VALUES (1, -7200000, ?)", arguments: [now - 600_000])
        }
        // When the new version opens it
        let after = try LocalStore(path: path, migrations: RecyclingSchema.migrations)
        // Then the engine's clock trusts the offset, and a scan is stamped by the server's time
        let clock = DeviceClock(store: after, wallClock: { now })
        #expect(clock.offset() == -7_200_000 && clock.now() == now - 7_200_000)
        let stamp = ScanClock(clock: clock).stamp()
        #expect(stamp.sure && stamp.takenAt == now - 7_200_000 && stamp.deviceTakenAt == now)
        // And SustainU's own table is gone: the engine's is the one place it is kept
        #expect(try await after.reader.read { db in try db.tableExists("device_clock") } == false)
    }
}
