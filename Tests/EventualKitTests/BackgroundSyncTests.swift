import EventualAPI
import Foundation
import Testing
@testable import EventualKit

@Suite("Background sync: connectivity, timer and status", .timeLimit(.minutes(2)))
struct BackgroundSyncTests {
    @Test func writesMadeOfflineAreSentWhenTheNetworkReturnsWithNoFurtherAction() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let user = try await registerUser(port: port)
            let proxy = try await FaultProxy.start(upstreamPort: port, seed: 42)
            let device = try Device(folder: scratch.url.appendingPathComponent("d"),
                                    serverURL: URL(string: "http://127.0.0.1:\(proxy.port)")!, timeout: .seconds(2))
            let direct = ServerLink(serverURL: URL(string: "http://127.0.0.1:\(port)")!, timeouts: .patient) { nil }
            try await device.vault.signIn(email: user.email, password: user.password, client: direct.client)
            // Given the basement: no network, and the engine running in the background
            proxy.mode = .blackHole
            await device.engine.start()
            for index in 0..<3 { try await device.add("offline \(index)") }
            #expect(try await eventually { device.engine.currentStatus.connectivity == .offline })
            #expect(try device.outbox.counts().pending == 3)
            // When the network returns, with no new write and no syncNow
            proxy.mode = .pass
            // Then the connectivity probe notices and everything goes
            #expect(try await eventually { try device.outbox.counts().pending == 0 })
            #expect(try await eventually { device.engine.currentStatus.connectivity == .online })
            // And the status says so: "back online, 3 changes sent"
            #expect(try await eventually { device.engine.currentStatus.lastEvent == .delivered(count: 3, afterOffline: true) },
                    "\(device.engine.currentStatus)")
            #expect(try await eventually { device.engine.currentStatus.lastSyncAt != nil })
            await device.engine.stop()
            await proxy.stop()
        }
    }

    @Test func aTransientServerErrorIsRetriedByTheTimer() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let user = try await registerUser(port: port)
            let proxy = try await FaultProxy.start(upstreamPort: port, seed: 7)
            let device = try Device(folder: scratch.url.appendingPathComponent("d"),
                                    serverURL: URL(string: "http://127.0.0.1:\(proxy.port)")!, timeout: .seconds(2))
            let direct = ServerLink(serverURL: URL(string: "http://127.0.0.1:\(port)")!, timeouts: .patient) { nil }
            try await device.vault.signIn(email: user.email, password: user.password, client: direct.client)
            // Given every answer is cut (the elevator) while the engine runs
            proxy.mode = .cutAfter(bytes: 10)
            try await device.add("Tea")
            await device.engine.start()
            #expect(try await eventually { try device.outbox.entries().first.map { $0.attempts >= 2 } ?? false })
            // When answers get through again
            proxy.mode = .pass
            // Then a retry sends it without a new write, applied once
            #expect(try await eventually { try device.outbox.counts().pending == 0 })
            await device.engine.stop()
            await proxy.stop()
            let other = try Device(folder: scratch.url.appendingPathComponent("o"), serverURL: URL(string: "http://127.0.0.1:\(port)")!)
            try await other.vault.signIn(email: user.email, password: user.password, client: other.link.client)
            _ = await other.engine.syncNow()
            #expect(try other.items().map(\.name) == ["Tea"])
        }
    }

    @Test func theStatusStreamReportsPendingAndFailedCounts() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let user = try await registerUser(port: port)
            let device = try Device(folder: scratch.url.appendingPathComponent("d"), serverURL: URL(string: "http://127.0.0.1:\(port)")!)
            try await device.vault.signIn(email: user.email, password: user.password, client: device.link.client)
            try await device.add("Good")
            try await device.store.write { tx in
                try tx.recordChange(SyncCollections.pantryItems, id: "bad", fields: ["quantity": .string("lots")])
            }
            await device.engine.refreshStatus()
            #expect(device.engine.currentStatus.pending == 2)
            _ = await device.engine.syncNow()
            let status = device.engine.currentStatus
            #expect(status.pending == 0 && status.failed == 1)
            guard case .rejected(_, let message) = status.lastEvent else {
                Issue.record("expected a rejection event, got \(String(describing: status.lastEvent))"); return
            }
            #expect(message.contains("quantity"))
        }
    }
}
