import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

@Suite("Live queries: rows with their sync state, one snapshot per committed change", .timeLimit(.minutes(3)))
struct LiveQueryTests {
    @Test(arguments: Backend.available)
    func aWriteWaitsThenIsConfirmedAndARefusalShowsTheServersWords(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let ann = try await registerPerson(server, name: "ann")
            let phone = try await Device.of(ann, server: server, folder: scratch.url.appendingPathComponent("phone"))
            let live = LiveSnapshots(phone)
            try await live.wait { $0.rows.isEmpty }
            // Given an item added on the phone, not yet sent
            let milk = try await phone.put("Milk", quantity: 2, in: nil)
            try await live.wait { $0.rows.count == 1 }
            #expect(live.states == ["Milk": .pending(count: 1)])
            #expect(try phone.store.syncStates(SyncCollections.pantryItems, ids: [milk]) == [milk: .pending(count: 1)])
            // When it is sent
            #expect(await phone.engine.syncNow().isComplete)
            // Then it is confirmed, with the time of the sync
            try await live.wait { $0.rows.first?.state == .confirmed }
            try await live.wait { $0.lastSyncedAt != nil }
            // And a change the server refuses shows its words
            let tooLong = String(repeating: "a", count: 201)
            try await phone.store.write { tx in try Device.items.update(milk, setting: ["name": .string(tooLong)], in: tx) }
            let report = await phone.engine.syncNow()
            #expect(report.rejected == 1)
            let reason = try #require(report.rejections.first?.message)
            try await live.wait { $0.rows.first?.state == .failed(reason: reason) }
            #expect(try phone.store.syncStates(SyncCollections.pantryItems, ids: [milk, "unknown"])
                == [milk: .failed(reason: reason), "unknown": .confirmed])
            await live.cancel()
        }
    }

    @Test(arguments: Backend.available)
    func anotherDevicesChangeEmitsOncePerPageAndOtherTablesNever(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let ann = try await registerPerson(server, name: "ann")
            let phone = try await Device.of(ann, server: server, folder: scratch.url.appendingPathComponent("phone"))
            let laptop = try await Device.of(ann, server: server, folder: scratch.url.appendingPathComponent("laptop"))
            let tea = try await phone.put("Tea", quantity: 3, in: nil)
            _ = await phone.engine.syncNow()
            let live = LiveSnapshots(phone)
            try await live.wait { $0.rows.first?.state == .confirmed }
            try await live.letStragglersArrive()
            let before = live.count
            // When the laptop uses one and adds bread, and the phone pulls them in one page
            try await laptop.store.write { tx in
                _ = try Device.items.update(tea, adding: ["quantity": -1], in: tx)
                _ = try Device.items.insert("bread", ["name": "Bread", "quantity": 1, "status": "inPantry", "boughtAt": 1], in: tx)
            }
            #expect(await laptop.engine.syncNow().isComplete)
            let report = await phone.engine.syncNow()
            #expect(report.pulled == 2)
            // Then the phone's live query emitted exactly once, with both
            try await live.letStragglersArrive()
            #expect(live.count == before + 1)
            #expect(live.latest?.rows.map(\.row.description) == ["bread Bread ×1.0 [-]", "\(tea.prefix(8)) Tea ×2.0 [-]"])
            #expect(live.latest?.rows.map(\.state) == [.confirmed, .confirmed])
            // And a write to another table, or a sync that brings nothing, emits nothing
            let quiet = live.count
            try await phone.store.writer.write { db in try db.execute(sql: "CREATE TABLE notes (text TEXT)") }
            try await phone.store.write { tx in try tx.db.execute(sql: "INSERT INTO notes (text) VALUES ('hello')") }
            _ = await phone.engine.syncNow()
            // NB: longer than a second: the check for other processes' commits must not take
            // this process's own (the round wrote the time of the last sync) for one.
            try await Task.sleep(for: .milliseconds(2_500))
            #expect(live.count == quiet)
            await live.cancel()
        }
    }

    @Test func cancellingReleasesTheObservation() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let phone = try Device(folder: scratch.url, serverURL: unreachableServer)
        let live = LiveSnapshots(phone)
        try await live.wait { $0.rows.isEmpty }
        try await phone.put("Rice", quantity: 1, in: nil)
        try await live.wait { $0.rows.count == 1 }
        // When the task that iterates the stream is cancelled
        await live.cancel()
        try await live.letStragglersArrive()
        let reads = live.fetches
        // Then later writes read nothing more for it: no observer is left
        try await phone.put("Beans", quantity: 1, in: nil)
        try await phone.put("Oats", quantity: 1, in: nil)
        try await live.letStragglersArrive()
        #expect(live.fetches == reads)
        #expect(live.count == 2)
    }
}
