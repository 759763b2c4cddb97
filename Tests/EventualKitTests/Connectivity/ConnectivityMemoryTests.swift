import EventualAPI
import Foundation
import GRDB
import Synchronization
import Testing
@testable import EventualKit

/// A process that found the server silent or unreachable does not wait for it again at every
/// step of one command, and says which it was; an answer ends that.
@Suite("The connectivity monitor remembers what this process found", .timeLimit(.minutes(1)))
struct ConnectivityMemoryTests {
    @Test func anUnreachableServerIsAskedOnceUntilItAnswers() async throws {
        // Given a server that refuses every probe
        let probes = Atomic<Int>(0)
        let monitor = ConnectivityMonitor { probes.add(1, ordering: .relaxed); return false }
        // When a command checks twice
        #expect(await monitor.checkOnce(within: .seconds(5)) == .offline)
        #expect(await monitor.checkOnce(within: .seconds(5)) == .offline)
        // Then it asked once, and knows it unreachable, not silent
        #expect(probes.load(ordering: .relaxed) == 1)
        #expect(monitor.finding == .unreachable && monitor.foundOffline && !monitor.foundSilent)
        // And once a request gets an answer, the next check asks again
        monitor.reportAnswer()
        #expect(monitor.finding == .none)
        _ = await monitor.checkOnce(within: .seconds(5))
        #expect(probes.load(ordering: .relaxed) == 2)
        monitor.stop()
    }

    @Test func aSilentServerStaysSilentWhenARequestThenTimesOut() async throws {
        // Given a server that accepts and never answers within the budget
        let monitor = ConnectivityMonitor {
            try? await Task.sleep(for: .seconds(30))
            return false
        }
        // When a command checks, waiting 100 ms
        let started = ContinuousClock.now
        #expect(await monitor.checkOnce(within: .milliseconds(100)) == .offline)
        // Then it is found silent, and a later request's own timeout does not make it "no internet"
        #expect(monitor.foundSilent)
        monitor.reportTransportFailure()
        #expect(monitor.finding == .silent)
        // And the next check does not wait at all
        #expect(await monitor.checkOnce(within: .seconds(10)) == .offline)
        #expect(ContinuousClock.now - started < .seconds(5))
        monitor.stop()
    }

    @Test func aSyncRoundThatFindsTheServerUnreachableIsRemembered() async throws {
        // Given an engine whose server cannot be reached, with a change to send
        let store = try LocalStore(writer: DatabaseQueue(), migrations: [itemsMigration])
        let engine = SyncEngine(store: store, link: ServerLink(serverURL: unreachableServer) { nil },
                                collections: [TableMirror(SyncCollections.pantryItems, table: "items")])
        try await addItem("Milk", to: store)
        // When a round tries to send it
        let report = await engine.syncNow(pull: false)
        // Then the monitor remembers the server unreachable: the command's next step does not wait for it
        let monitor = await engine.connectivity
        #expect(report.failure != nil)
        #expect(monitor.finding == .unreachable)
        #expect(await monitor.checkOnce(within: .seconds(10)) == .offline)
        monitor.stop()
    }
}
