import EventualAPI
import Synchronization
import Testing
@testable import EventualKit

/// A wall clock a test can set.
final class ManualClock: Sendable {
    private let millis: Mutex<Int64>
    init(_ millis: Int64 = 1_764_000_000_000) { self.millis = Mutex(millis) }
    var now: Int64 { millis.withLock { $0 } }
    func set(_ value: Int64) { millis.withLock { $0 = value } }
    func advance(by delta: Int64) { millis.withLock { $0 += delta } }
}

@Suite("Hybrid logical clock")
struct HybridLogicalClockTests {
    @Test func stampTextSortsInCausalOrder() throws {
        let stamps = [
            HLCStamp(millis: 1_764_000_000_000, counter: 0, node: "b"),
            HLCStamp(millis: 1_764_000_000_000, counter: 1, node: "a"),
            HLCStamp(millis: 1_764_000_000_001, counter: 0, node: "a"),
            HLCStamp(millis: 999, counter: 99_999, node: "z"),
        ]
        #expect(stamps.sorted().map(\.description) == stamps.map(\.description).sorted())
        #expect(stamps[0].description == "1764000000000-00000-b")
        #expect(HLCStamp(parsing: "0000000000999-99999-z") == stamps[3])
    }

    @Test func malformedStampsAreRefused() {
        for text in ["", "1764000000000-0-a", "176400000000-00000-a", "1764000000000-00000-", "x764000000000-00000-a",
                     "1764000000000-00000-a b", "1764000000000_00000_a"] {
            #expect(HLCStamp(parsing: text) == nil, "\(text)")
        }
    }

    @Test func ticksIncreaseEvenWhenTheWallClockStepsBack() {
        let wall = ManualClock()
        let clock = HybridLogicalClock(node: "dev1", wallClock: { wall.now })
        let first = clock.tick()
        wall.advance(by: -60_000)
        let second = clock.tick()
        let third = clock.tick()
        #expect(first < second && second < third)
        #expect(second.millis == first.millis && second.counter == 1)
    }

    @Test func receivingANewerStampMovesLaterTicksPastIt() throws {
        let wall = ManualClock()
        let clock = HybridLogicalClock(node: "dev1", wallClock: { wall.now })
        let remote = HLCStamp(millis: wall.now + 120_000, counter: 7, node: "dev2")
        try clock.receive(remote)
        #expect(clock.tick() > remote)
    }

    @Test func aStampFarInTheFutureIsRefusedAndChangesNothing() throws {
        let wall = ManualClock()
        let clock = HybridLogicalClock(node: "dev1", maxDrift: .seconds(300), wallClock: { wall.now })
        let before = clock.tick()
        let poisoned = HLCStamp(millis: wall.now + 301_000, counter: 0, node: "evil")
        #expect(throws: ClockError.self) { try clock.receive(poisoned) }
        let after = clock.tick()
        #expect(after.millis == before.millis && after.counter == before.counter + 1)
    }

    @Test func aRestartedClockResumesAfterItsLastStamp() {
        let wall = ManualClock()
        let stored = HLCStamp(millis: wall.now + 10, counter: 3, node: "dev1")
        let clock = HybridLogicalClock(node: "dev1", resumingAfter: stored, wallClock: { wall.now })
        #expect(clock.tick() > stored)
    }

    @Test func aClockAnHourFastStampsByTheServersTimeOnceItHearsIt() throws {
        // Given a device whose clock is an hour fast, which stamped a change by it
        let wall = ManualClock()
        let server = wall.now - 3_600_000
        let clock = HybridLogicalClock(node: "dev1", maxDrift: .seconds(300), wallClock: { wall.now })
        let wrong = clock.tick()
        #expect(wrong.millis == wall.now)
        // When an answer tells it the server's time
        clock.learn(serverNow: server)
        // Then its next stamps follow the server's time, not the wrong stamp
        let next = clock.tick(), after = clock.tick()
        #expect(next.millis == server && after > next)
        #expect(clock.serverOffset == -3_600_000)
        // And a stamp from another device is judged against the server's time too
        #expect(throws: ClockError.self) { try clock.receive(HLCStamp(millis: server + 301_000, counter: 0, node: "dev2")) }
        try clock.receive(HLCStamp(millis: server + 60_000, counter: 0, node: "dev2"))
        #expect(clock.tick().millis == server + 60_000)
    }

    @Test func aClockAFewSecondsOffIsLeftAlone() {
        let wall = ManualClock()
        let clock = HybridLogicalClock(node: "dev1", wallClock: { wall.now })
        clock.learn(serverNow: wall.now + 2_000)
        #expect(clock.tick().millis == wall.now)
    }

    @Test func aRestartedClockKeepsTheServersOffset() {
        let wall = ManualClock()
        let stored = HLCStamp(millis: wall.now, counter: 0, node: "dev1")
        let clock = HybridLogicalClock(node: "dev1", resumingAfter: stored, serverOffset: -3_600_000, wallClock: { wall.now })
        #expect(clock.tick().millis == wall.now - 3_600_000)
    }
}
