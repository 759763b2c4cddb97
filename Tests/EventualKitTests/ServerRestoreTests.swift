import EventualAPI
import EventualServer
import EventualTestSupport
import Foundation
import GRDB
import Testing
@testable import EventualKit

/// The server's database put back to an earlier copy while devices go on: no device's cursor
/// skips a change made after the restore, what the server lost is sent back by the devices that
/// hold it, and every device and a new one end with the same records.
@Suite("A server restored from a backup", .timeLimit(.minutes(3)))
struct ServerRestoreTests {
    @Test func everyDeviceAndANewOneListTheSameItemsAfterARestore() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let database = scratch.url.appendingPathComponent("server.sqlite").path
            // Given Alice (two devices) and Bob share a household holding Eggs, Milk and Rice
            let alice = try await registerUser(port: port, name: "alice"), bob = try await registerUser(port: port, name: "bob")
            let a1 = try await signedIn(alice, "a1", port, scratch), a2 = try await signedIn(alice, "a2", port, scratch)
            let b = try await signedIn(bob, "b", port, scratch)
            let household = try await shareSpace("Home", owner: a1.link, member: b.link, memberEmail: bob.email)
            for name in ["Eggs", "Milk", "Rice"] { try await a1.add(name, space: household) }
            try await syncAll([a1, a2, b])
            // And the server's database is copied
            let backup = try await ServerSnapshot.take(of: .sqlite(path: database))
            defer { backup.remove() }
            // And then Alice adds Tea, Bob adds Figs and removes Rice, all synced and acknowledged
            try await a1.add("Tea", space: household)
            try await b.add("Figs", space: household)
            let rice = try #require(try b.items().first { $0.name == "Rice" }?.id)
            try await b.delete(rice)
            try await syncAll([a1, b, a2])
            try await syncAll([a1, b, a2])
            #expect(try names(a2) == ["Eggs", "Figs", "Milk", "Tea"])

            // When the copy is put back, and Alice adds Jam and Bob adds Oats
            try await backup.restore()
            try await a1.add("Jam", space: household)
            try await b.add("Oats", space: household)
            let reports = [await a1.engine.syncNow(), await b.engine.syncNow(), await a2.engine.syncNow()]
            try await syncAll([a1, b, a2])
            try await syncAll([a1, b, a2])

            // Then every device noticed the restore once and sent back what it held
            #expect(reports.allSatisfy { $0.serverRestored && $0.failure == nil }, "\(reports.map { ($0.serverRestored, $0.failure as Any) })")
            #expect(reports[0].sentBackAfterRestore > 0)
            // And every device, and a new one of Alice's, lists the same items: nothing lost, the removal kept
            let a3 = try await signedIn(alice, "a3", port, scratch)
            _ = await a3.engine.syncNow()
            let expected = ["Eggs", "Figs", "Jam", "Milk", "Oats", "Tea"]
            for device in [a1, a2, b, a3] {
                #expect(try names(device) == expected)
                #expect(try device.outbox.counts() == OutboxCounts(pending: 0, failed: 0))
            }
            #expect(try a1.items() == a3.items() && b.items() == a3.items() && a2.items() == a3.items())
        }
    }

    @Test func aRestoreBeforeADevicesOwnPushIsNoticedThoughItsCursorNeverPassedIt() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let database = scratch.url.appendingPathComponent("server.sqlite").path
            let alice = try await registerUser(port: port, name: "alice")
            let a1 = try await signedIn(alice, "a1", port, scratch), a2 = try await signedIn(alice, "a2", port, scratch)
            try await a1.add("Eggs")
            try await syncAll([a1, a2])
            let backup = try await ServerSnapshot.take(of: .sqlite(path: database))
            defer { backup.remove() }
            // Given a1 pushed Tea, and never pulled after it
            let tea = try await a1.add("Tea", quantity: 3)
            #expect(await a1.engine.syncNow(pull: false).sent == 1)
            // When the server is put back to before Tea, and a2 writes as many changes as Tea took
            try await backup.restore()
            try await a2.add("Jam")
            _ = await a2.engine.syncNow()
            // Then a1 notices, sends Tea back with its quantity, and receives Jam
            let report = await a1.engine.syncNow()
            #expect(report.serverRestored && report.sentBackAfterRestore >= 2 && report.failure == nil)
            _ = await a2.engine.syncNow()
            #expect(try names(a1) == ["Eggs", "Jam", "Tea"])
            #expect(try a2.items() == a1.items())
            #expect(try a2.items().first { $0.id == tea }?.quantity == 3)
        }
    }

    @Test func aServerThatWasNotRestoredNeverAsksForAnythingBack() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let alice = try await registerUser(port: port, name: "alice")
            let a1 = try await signedIn(alice, "a1", port, scratch), a2 = try await signedIn(alice, "a2", port, scratch)
            for round in 0..<5 {
                try await a1.add("Item \(round)")
                try await a2.add("Other \(round)")
                for device in [a1, a2] {
                    let report = await device.engine.syncNow()
                    #expect(!report.serverRestored && report.sentBackAfterRestore == 0 && report.failure == nil)
                }
            }
            _ = await a1.engine.syncNow()
            #expect(try a1.items() == a2.items())
            #expect(try a1.items().count == 10)
        }
    }

    @Test func aDeletionTheRestoredServerLostIsSentBack() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let database = scratch.url.appendingPathComponent("server.sqlite").path
            let alice = try await registerUser(port: port, name: "alice")
            let a1 = try await signedIn(alice, "a1", port, scratch), a2 = try await signedIn(alice, "a2", port, scratch)
            let milk = try await a1.add("Milk")
            try await a1.add("Eggs")
            try await syncAll([a1, a2])
            let backup = try await ServerSnapshot.take(of: .sqlite(path: database))
            defer { backup.remove() }
            // Given a1 deleted Milk, acknowledged, and a2 heard it
            try await a1.delete(milk)
            try await syncAll([a1, a2])
            #expect(try names(a2) == ["Eggs"])
            // When the server goes back to when Milk was there
            try await backup.restore()
            try await syncAll([a2, a1, a2])
            // Then Milk stays deleted everywhere, and a new device never sees it
            let a3 = try await signedIn(alice, "a3", port, scratch)
            _ = await a3.engine.syncNow()
            for device in [a1, a2, a3] { #expect(try names(device) == ["Eggs"]) }
        }
    }

    @Test func aChangeMadeOnARecordTheRestoredServerLostLandsAfterTheRecordComesBack() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let database = scratch.url.appendingPathComponent("server.sqlite").path
            let alice = try await registerUser(port: port, name: "alice")
            let a1 = try await signedIn(alice, "a1", port, scratch), a2 = try await signedIn(alice, "a2", port, scratch)
            try await a1.add("Eggs")
            try await syncAll([a1, a2])
            let backup = try await ServerSnapshot.take(of: .sqlite(path: database))
            defer { backup.remove() }
            // Given Tea and Jam added after the copy, and 2 of the 8 jars of Jam used, all acknowledged
            // by pushes alone (as a command's own sync sends them): a1 holds them as its own changes, no pulled state
            let tea = try await a1.add("Tea"), jam = try await a1.add("Jam", quantity: 8)
            #expect(await a1.engine.syncNow(pull: false).sent == 2)
            try await a1.consume(jam, 2)
            #expect(await a1.engine.syncNow(pull: false).sent == 1)

            // When the copy is put back, and a1 removes Tea and throws Jam away before it syncs again
            try await backup.restore()
            try await a1.delete(tea)
            try await a1.throwAway(jam)
            try await syncAll([a1, a2, a1])

            // Then nothing was refused: what came back came first, and the changes made on it after
            #expect(try a1.engine.failures().isEmpty)
            #expect(try a1.outbox.counts() == OutboxCounts(pending: 0, failed: 0))
            // And every device, and a new one, holds Eggs, and Jam thrown away with 6 left; Tea stays removed
            let a3 = try await signedIn(alice, "a3", port, scratch)
            _ = await a3.engine.syncNow()
            let thrown = try #require(try a3.itemsWithStatus().first { $0.name == "Jam" })
            #expect(thrown.status == "thrownAway" && thrown.quantity == 6)
            #expect(try names(a3) == ["Eggs", "Jam"])
            #expect(try a1.itemsWithStatus() == a3.itemsWithStatus() && a2.itemsWithStatus() == a3.itemsWithStatus())
        }
    }

    // MARK: - Helpers

    private func signedIn(_ user: (email: String, password: String), _ name: String, _ port: Int, _ scratch: ScratchFolder)
        async throws -> Device
    {
        let device = try Device(folder: scratch.url.appendingPathComponent(name), serverURL: URL(string: "http://127.0.0.1:\(port)")!)
        try await device.vault.signIn(email: user.email, password: user.password, client: device.link.client)
        return device
    }

    private func syncAll(_ devices: [Device]) async throws {
        for device in devices {
            let report = await device.engine.syncNow()
            if let failure = report.failure { throw TestFailure("sync failed: \(failure)") }
        }
    }

    private func names(_ device: Device) throws -> [String] { try device.items().map(\.name).sorted() }
}
