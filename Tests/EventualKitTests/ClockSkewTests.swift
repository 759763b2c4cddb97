import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

/// A device whose clock is wrong is never wedged: the engine learns the server's time from its
/// answers, stamps by it, and sends again what the server refused only for the clock.
@Suite("A wrong device clock against a real server", .timeLimit(.minutes(2)))
struct ClockSkewTests {
    static let hourFast: @Sendable () -> Int64 = { UnixMillis.now() + 3_600_000 }

    @Test func changesStampedAnHourAheadAreStampedAgainAndSentAndLaterEditsGoThrough() async throws {
        try await withLiveServer { server, scratch in
            // Given a device whose clock is an hour fast, with changes stamped by it
            let user = try await registerUser(port: try #require(server.port))
            let folder = scratch.url.appendingPathComponent("fast")
            let fast = try Device(folder: folder, serverURL: server, wallClock: Self.hourFast)
            let id = try await fast.add("Milk", quantity: 2)
            try await fast.edit(id, quantity: 3)
            try await fast.vault.signIn(email: user.email, password: user.password, client: fast.link.client)
            // When it syncs
            let first = await fast.engine.syncNow()
            // Then the server refused them for the clock, and they were stamped again by its time and applied
            #expect(first.isComplete, "\(first.rejections) \(String(describing: first.failure))")
            #expect(first.sent == 2 && first.restamped == 2 && first.rejected == 0)
            #expect((3590...3610).contains(first.clockAheadBySeconds ?? 0), "\(String(describing: first.clockAheadBySeconds))")
            #expect(try fast.outbox.counts() == OutboxCounts())
            // And its last sync is stamped by the server's time, not an hour ahead ("last sync 1 hour ago" once the clock is set right)
            await fast.engine.refreshStatus()
            let lastSync = try #require(fast.engine.currentStatus.lastSyncAt)
            #expect(abs(lastSync - UnixMillis.now()) < 60_000, "\(lastSync) against \(UnixMillis.now())")
            // And a later edit is stamped by the server's time and accepted at once
            try await fast.edit(id, quantity: 4)
            let later = await fast.engine.syncNow()
            #expect(later.isComplete && later.sent == 1 && later.restamped == 0)
            // And another device of the person sees the last edit
            let other = try Device(folder: scratch.url.appendingPathComponent("other"), serverURL: server)
            try await other.vault.signIn(email: user.email, password: user.password, client: other.link.client)
            _ = await other.engine.syncNow()
            #expect(try other.items().map(\.quantity) == [4])
            // And the device, opened again offline in a new process, still stamps by the server's time
            let reopened = try LocalStore(path: folder.appendingPathComponent("store.sqlite").path, migrations: [itemsMigration],
                                          wallClock: Self.hourFast)
            #expect(abs(reopened.clock.tick().millis - UnixMillis.now()) < 60_000)
        }
    }

    @Test func aChangeRefusedForTheClockIsKeptWaitingNotFailed() async throws {
        try await withLiveServer(configure: { $0.maxClockDrift = .seconds(60) }) { server, scratch in
            // Given a server that allows 60 s of drift, and a device that took in a stamp 200 s ahead
            // (its own 300 s allow it), so that its stamps stay ahead of what the server accepts
            let user = try await registerUser(port: try #require(server.port))
            let device = try Device(folder: scratch.url.appendingPathComponent("device"), serverURL: server)
            try await device.vault.signIn(email: user.email, password: user.password, client: device.link.client)
            try device.store.clock.receive(HLCStamp(millis: UnixMillis.now() + 200_000, counter: 0, node: "elsewhere"))
            try await device.add("Tea")
            // When it syncs and the server refuses the stamp, even stamped again
            let report = await device.engine.syncNow()
            // Then the change is neither failed nor lost: it waits, and the report says why
            #expect(report.sent == 0 && report.rejected == 0 && report.restamped == 1 && report.clockRefused == 1)
            #expect(!report.isComplete)
            #expect(report.clockRefusals.first?.message.contains("ahead of the server's clock") == true, "\(report.clockRefusals)")
            #expect(try device.outbox.counts() == OutboxCounts(pending: 1, failed: 0))
        }
    }

    @Test func aChangeHeldForTheClockGoesOncePerRoundHoweverSlowTheAnswer() async throws {
        try await withLiveServer(configure: { $0.maxClockDrift = .seconds(60) }) { server, scratch in
            // Given a device whose backoff (a millisecond or two) is shorter than any answer of the
            // server, so that a held change is due again before the round ends
            var configuration = SyncConfiguration.fast
            configuration.retry = Backoff(initial: .milliseconds(1), maximum: .seconds(1))
            let user = try await registerUser(port: try #require(server.port))
            let device = try Device(folder: scratch.url.appendingPathComponent("device"), serverURL: server, configuration: configuration)
            try await device.vault.signIn(email: user.email, password: user.password, client: device.link.client)
            try device.store.clock.receive(HLCStamp(millis: UnixMillis.now() + 200_000, counter: 0, node: "elsewhere"))
            try await device.add("Tea")
            // When it syncs and the server refuses the stamp, even stamped again
            let report = await device.engine.syncNow()
            // Then the round sent it twice (as it was, and stamped again), not once more per backoff.
            // NB: it went again and again while the answers outlasted the backoff (a busy machine
            // with the fast test backoff, a slow link with a person's).
            #expect(report.restamped == 1 && report.clockRefused == 1, "\(report.clockRefusals)")
            #expect(try device.outbox.counts() == OutboxCounts(pending: 1, failed: 0))
        }
    }
}
