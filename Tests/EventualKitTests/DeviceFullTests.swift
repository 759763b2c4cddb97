import Foundation
import GRDB
import Testing
@testable import EventualKit

/// Issue 45: a device whose disk fills. A write that cannot be saved is refused whole and said in
/// one line; what was saved before stays; a sync round that cannot save what it brings says the
/// device is full, not offline; and sync goes on by itself once there is room, nothing lost or
/// applied twice.
@Suite("A device whose disk fills loses nothing", .timeLimit(.minutes(2)))
struct DeviceFullTests {
    /// Lets the device's database grow by no page more (SQLite's `max_page_count`, on the one
    /// connection that writes), or by as many as it likes again: a full disk, and space freed.
    private func fill(_ device: Device, _ full: Bool) async throws {
        try await device.store.writer.writeWithoutTransaction { db in
            let limit = full ? try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 1 : 1_073_741_823
            try db.execute(sql: "PRAGMA max_page_count = \(limit)")
        }
    }

    @Test(arguments: Backend.available)
    func aFullDeviceRefusesAWriteWholeSaysItIsFullAndSyncsByItselfOnceThereIsRoom(_ backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let person = try await registerPerson(server, name: "full")
            let phone = try await Device.of(person, server: server, folder: scratch.url.appendingPathComponent("phone"))
            let tablet = try await Device.of(person, server: server, folder: scratch.url.appendingPathComponent("tablet"))
            // Given a phone with three items synced and one waiting to be sent
            for name in ["Rice", "Tea", "Jam"] { try await phone.add(name) }
            #expect(await phone.engine.syncNow().isComplete)
            try await phone.add("Waiting")
            let saved = try phone.items()

            // When its disk is full
            try await fill(phone, true)
            // Then a write that needs room is refused whole, said as a full disk: no item and no queued change of it
            var refused: (any Error)?
            for index in 0..<200 where refused == nil {
                do { try await phone.add(String(repeating: "Flour \(index) ", count: 12)) } catch { refused = error }
            }
            let error = try #require(refused, "200 new items fitted in a database that could not grow")
            #expect(DeviceStorageFailure.isFull(error), "\(error)")
            let kept = try phone.items()
            #expect(kept.count == (try phone.outbox.entries().count) + 3, "an item without its change, or a change without its item")
            #expect(Set(saved.map(\.id)).isSubset(of: kept.map(\.id)))

            // When the other device adds more than a page holds, and the phone syncs
            for index in 0..<150 { try await tablet.add("Tablet \(index)", category: String(repeating: "c", count: 40)) }
            #expect(await tablet.engine.syncNow().isComplete)
            let round = await phone.engine.syncNow()
            // Then the round says this device is full, not that the server is away
            #expect(round.failure == .deviceStorage(DeviceStorageFailure.full), "\(String(describing: round.failure))")
            #expect(phone.engine.currentStatus.connectivity != .offline)
            // And everything saved before is still there
            #expect(Set(kept.map(\.id)).isSubset(of: try phone.items().map(\.id)))

            // When space is freed, with the engine running and nobody asking
            await phone.engine.start()
            try await fill(phone, false)
            // Then the phone catches up by itself: what waited is sent, what the tablet added arrives
            let caughtUp = try await eventually { try phone.items().count == kept.count + 150 && phone.outbox.counts().pending == 0 }
            let (listed, counts) = (try phone.items().count, try phone.outbox.counts())
            #expect(caughtUp, "\(listed) items, \(counts)")
            await phone.engine.stop()
            // And the tablet ends with the same items, each once
            _ = await tablet.engine.syncNow()
            #expect(try tablet.items() == phone.items())
            #expect(try tablet.items().filter { $0.name == "Waiting" }.count == 1)
        }
    }
}
