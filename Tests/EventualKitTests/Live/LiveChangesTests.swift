import EventualAPI

import Foundation
import Testing
@testable import EventualKit

/// The engine's half of live changes: while it runs, another device's change reaches its live
/// query as it is written, with no write of its own and its timer at an hour; a cut channel is
/// opened again and nothing written meanwhile is missed.
@Suite("Live changes: another device's change reaches a running engine", .timeLimit(.minutes(3)))
struct LiveChangesTests {
    /// A timer that never fires within a test: what arrives came by the live channel.
    static var liveOnly: SyncConfiguration {
        var configuration = SyncConfiguration.fast
        configuration.interval = .seconds(3600)
        configuration.live.backoff = Backoff(initial: .milliseconds(100), maximum: .milliseconds(400))
        return configuration
    }

    @Test(arguments: Backend.available)
    func aHouseholdMembersChangeReachesTheOthersLiveQueryWithItsTimerAtAnHour(_ backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            // Given ann's and bob's household, ann's engine running with its timer at an hour
            let ann = try await registerPerson(server, name: "ann"), bob = try await registerPerson(server, name: "bob")
            let annsPhone = try await Device.of(ann, server: server, folder: scratch.url.appendingPathComponent("ann"),
                                                configuration: Self.liveOnly)
            let bobsPhone = try await Device.of(bob, server: server, folder: scratch.url.appendingPathComponent("bob"))
            let home = try await household(ann: (annsPhone, ann), bob: (bobsPhone, bob))
            await annsPhone.engine.start()
            try await waitUntilLive(annsPhone.engine)
            let annSees = LiveSnapshots(annsPhone)
            // When bob puts milk in Home and sends it
            try await bobsPhone.put("Milk", quantity: 2, in: home)
            #expect(await bobsPhone.engine.syncNow().isComplete)
            // Then ann's list shows it, though she wrote nothing and her timer is an hour away
            try await annSees.wait { $0.rows.contains { $0.row.name == "Milk" && $0.row.quantity == 2 } }
            // And so does each change after it
            try await bobsPhone.put("Eggs", quantity: 6, in: home)
            #expect(await bobsPhone.engine.syncNow().isComplete)
            try await annSees.wait { $0.rows.contains { $0.row.name == "Eggs" } }
            #expect(annsPhone.engine.currentStatus.isLive)
            await annSees.cancel()
            await annsPhone.engine.stop()
            #expect(!annsPhone.engine.currentStatus.isLive)
        }
    }

    @Test
    func theChannelCutByTheNetworkIsOpenedAgainAndNothingWrittenMeanwhileIsMissed() async throws {
        try await withLiveServer { server, scratch in
            let proxy = try await FaultProxy.start(upstreamPort: try #require(server.port), seed: 1)
            do {
                // Given ann's phone, behind a network that fails, live; her tablet on a good one
                let ann = try await registerPerson(server, name: "ann")
                let phone = try await Device.of(ann, server: URL(string: "http://127.0.0.1:\(proxy.port)")!,
                                                folder: scratch.url.appendingPathComponent("phone"), configuration: Self.liveOnly)
                let tablet = try await Device.of(ann, server: server, folder: scratch.url.appendingPathComponent("tablet"))
                await phone.engine.start()
                try await waitUntilLive(phone.engine)
                let phoneSees = LiveSnapshots(phone)
                // When the network cuts the channel, and the tablet writes while it is down
                proxy.mode = .refuse
                try await waitUntil { !phone.engine.currentStatus.isLive }
                try await tablet.add("Milk")
                #expect(await tablet.engine.syncNow().isComplete)
                // Then once the network is back the channel opens again and the phone has the milk
                proxy.mode = .pass
                try await waitUntilLive(phone.engine)
                try await phoneSees.wait { $0.rows.contains { $0.row.name == "Milk" } }
                // And what comes after arrives live again
                try await tablet.add("Eggs")
                #expect(await tablet.engine.syncNow().isComplete)
                try await phoneSees.wait { $0.rows.contains { $0.row.name == "Eggs" } }
                await phoneSees.cancel()
                await phone.engine.stop()
            } catch {
                await proxy.stop()
                throw error
            }
            await proxy.stop()
        }
    }
}

/// Waits (up to 10 s) until the engine's live channel is up.
func waitUntilLive(_ engine: SyncEngine) async throws {
    try await waitUntil { engine.currentStatus.isLive }
}

/// Waits (up to 10 s) until `condition` holds.
func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while ContinuousClock.now < deadline {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    if !condition() { throw TestFailure("the condition did not come true within 10 s") }
}
