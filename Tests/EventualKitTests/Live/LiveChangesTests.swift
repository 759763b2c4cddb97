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
        // Given ann's phone, behind a network that fails, live; her tablet on a good one
        try await withPhoneBehindAProxy(seed: 1) { proxy, phone, tablet, phoneSees in
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
        }
    }

    /// While the channel is down the timer syncs at its own pace, not the live one (an hour
    /// here): the channel's reconnection may be a minute away.
    @Test
    func aDroppedChannelFallsBackToTheTimerAtItsOwnPace() async throws {
        var configuration = SyncConfiguration.fast
        configuration.interval = .seconds(1)
        configuration.live.intervalWhileLive = .seconds(3600)
        configuration.live.backoff = Backoff(initial: .seconds(60), maximum: .seconds(60))
        try await withPhoneBehindAProxy(seed: 3, configuration: configuration) { proxy, phone, tablet, phoneSees in
            // Given the phone's timer at its live pace, an hour: a round of its own ran while live
            // NB: without this the timer set before the channel came up (a second) would bring
            // the milk, and the test would pass without the fall back.
            try await phone.add("Tea")
            try await phoneSees.wait { $0.rows.contains { $0.row.name == "Tea" && $0.state == .confirmed } }
            try await waitUntil { !phone.engine.currentStatus.isSyncing }
            try await Task.sleep(for: .milliseconds(300))
            // And the network cuts the channel, which will not be opened again for up to a minute
            proxy.mode = .refuse
            try await waitUntil { !phone.engine.currentStatus.isLive }
            // When the tablet writes milk meanwhile, and the network is back
            try await tablet.add("Milk")
            #expect(await tablet.engine.syncNow().isComplete)
            proxy.mode = .pass
            let back = ContinuousClock.now
            // Then the phone's timer brings the milk within its second or so
            try await phoneSees.wait { $0.rows.contains { $0.row.name == "Milk" } }
            #expect(ContinuousClock.now - back < .seconds(4), "the milk came after \(ContinuousClock.now - back)")
        }
    }

    /// A round that reached the server ends the channel's wait to reconnect (`LiveNudge`), however
    /// long it had grown; a nudge while nothing waits is kept for the next wait, once.
    @Test
    func aNudgeEndsTheWaitToReconnectAndIsKeptOnceWhenNothingWaits() async throws {
        let nudges = LiveNudge()
        // A wait of a minute, nudged after 100 ms, ends then, nudged
        let started = ContinuousClock.now
        async let nudged = nudges.sleep(for: .seconds(60))
        try await Task.sleep(for: .milliseconds(100))
        nudges.nudge()
        #expect(await nudged)
        #expect(ContinuousClock.now - started < .seconds(5))
        // A wait with no nudge runs its time, not nudged
        #expect(await nudges.sleep(for: .milliseconds(50)) == false)
        // Nudges while nothing waits end the next wait at once, and only that one
        nudges.nudge()
        nudges.nudge()
        #expect(await nudges.sleep(for: .seconds(60)))
        #expect(await nudges.sleep(for: .milliseconds(50)) == false)
        // A cancelled wait ends at once, not nudged
        let waiting = Task { await nudges.sleep(for: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        #expect(await waiting.value == false)
    }

    /// Runs `body` with ann's phone behind a fault proxy (seeded `seed`, passing at first), its
    /// engine started with `liveOnly` and its channel up, her tablet straight on the server, and
    /// the phone's live query; stops the query, the engine and the proxy whatever happens.
    func withPhoneBehindAProxy(
        seed: UInt64, configuration: SyncConfiguration = Self.liveOnly,
        _ body: @Sendable (FaultProxy, Device, Device, LiveSnapshots) async throws -> Void
    ) async throws {
        try await withLiveServer { server, scratch in
            let proxy = try await FaultProxy.start(upstreamPort: try #require(server.port), seed: seed)
            do {
                let ann = try await registerPerson(server, name: "ann")
                let phone = try await Device.of(ann, server: URL(string: "http://127.0.0.1:\(proxy.port)")!,
                                                folder: scratch.url.appendingPathComponent("phone"), configuration: configuration)
                let tablet = try await Device.of(ann, server: server, folder: scratch.url.appendingPathComponent("tablet"))
                await phone.engine.start()
                let phoneSees: LiveSnapshots
                do {
                    try await waitUntilLive(phone.engine)
                    phoneSees = LiveSnapshots(phone)
                } catch {
                    await phone.engine.stop()
                    throw error
                }
                do {
                    try await body(proxy, phone, tablet, phoneSees)
                } catch {
                    await phoneSees.cancel()
                    await phone.engine.stop()
                    throw error
                }
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

extension LiveChangesTests {
    /// Joining and being removed race the household's pushes: whatever the order, bob's live
    /// query ends with every Home item while he is a member and none after he is removed, with
    /// his timer an hour away (what arrived came by the channel: a signal, or the poke of a
    /// membership change).
    @Test(arguments: Backend.available)
    func joiningAndBeingRemovedWhileTheHouseholdWritesEndsEqualToTheServer(_ backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            // Given ann's Home, bob invited to it and live, ann's tablet writing to Home
            let ann = try await registerPerson(server, name: "ann"), bob = try await registerPerson(server, name: "bob")
            let annsPhone = try await Device.of(ann, server: server, folder: scratch.url.appendingPathComponent("ann-phone"))
            let annsTablet = try await Device.of(ann, server: server, folder: scratch.url.appendingPathComponent("ann-tablet"))
            let bobsPhone = try await Device.of(bob, server: server, folder: scratch.url.appendingPathComponent("bob"),
                                                configuration: Self.liveOnly)
            let home = try await annsPhone.spaces(of: ann).create(name: "Home")
            try await annsPhone.spaces(of: ann).invite(bob.username, to: home)
            #expect(await annsPhone.engine.syncNow().isComplete)
            #expect(await annsTablet.engine.syncNow().isComplete)
            await bobsPhone.engine.start()
            try await waitUntilLive(bobsPhone.engine)
            let bobSees = LiveSnapshots(bobsPhone)
            let invitation = try #require(try await bobsPhone.spaces(of: bob).invitations().value.waiting.first(where: { $0.spaceID == home }))

            // When bob accepts while the tablet puts twelve items into Home, one sync each
            @Sendable func write(_ prefix: String) async throws {
                for number in 1...12 {
                    _ = try await annsTablet.put("\(prefix) \(number)", quantity: 1, in: home)
                    _ = await annsTablet.engine.syncNow()
                }
            }
            async let writes: Void = write("Before")
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...60)))
            _ = try await bobsPhone.spaces(of: bob).accept(invitation.id)
            try await writes
            #expect(await annsTablet.engine.syncNow().isComplete)
            // Then bob's list ends with the twelve, whether each came before or after he joined
            try await bobSees.wait { snapshot in (1...12).allSatisfy { number in snapshot.rows.contains { $0.row.name == "Before \(number)" } } }

            // When ann removes him while the tablet puts twelve more
            async let more: Void = write("After")
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...60)))
            try await annsPhone.spaces(of: ann).remove(bob.username, from: home)
            #expect(await annsPhone.engine.syncNow().isComplete)
            try await more
            #expect(await annsTablet.engine.syncNow().isComplete)
            // Then his list ends with none of Home's items, those written before the removal too
            try await bobSees.wait { $0.rows.isEmpty }
            #expect(bobsPhone.engine.currentStatus.isLive)
            await bobSees.cancel()
            await bobsPhone.engine.stop()
        }
    }

    /// Signals that come while a pull is on its way: the pull that answers one must not be taken for
    /// the answer to the next. A slow network (every chunk late) puts each of the tablet's pushes
    /// in the middle of the phone's pull; the phone must end with every item.
    @Test
    func signalsHeardWhileAPullIsOnItsWayAreEachPulled() async throws {
        try await withPhoneBehindAProxy(seed: 7) { proxy, phone, tablet, phoneSees in
            // Given a network that delays every chunk by 40 to 120 ms, and never cuts
            proxy.mode = .flaky(latency: .milliseconds(40)...(.milliseconds(120)), resetProbability: 0)
            // When the tablet writes fifteen items, a sync each, faster than the phone pulls
            for number in 1...15 {
                try await tablet.add("Item \(number)")
                #expect(await tablet.engine.syncNow().isComplete)
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...80)))
            }
            // Then the phone shows all fifteen, its timer an hour away
            try await phoneSees.wait { snapshot in (1...15).allSatisfy { number in snapshot.rows.contains { $0.row.name == "Item \(number)" } } }
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
