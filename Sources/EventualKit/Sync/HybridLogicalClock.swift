import EventualAPI
import Foundation
import Synchronization

/// Stamps the user's edits so that they order causally across devices: a stamp is never
/// smaller than one this device issued or saw before, even if the wall clock steps back.
///
/// A device whose clock is wrong stamps by the server's time once an answer has told it
/// (`learn(serverNow:)`): the server refuses a stamp further ahead of its clock than the allowed
/// drift, and a clock that kept such a stamp would have every later edit refused too.
public final class HybridLogicalClock: Sendable {
    /// A remote stamp further ahead of the local time than this is refused; the server allows
    /// this much too, so no local stamp gets this far ahead of the server's time.
    public let maxDrift: Duration
    public let node: String
    private let wallClock: @Sendable () -> Int64
    private let last: Mutex<HLCStamp>
    /// The server's time minus the wall clock's, in milliseconds, once known.
    private let offset: Mutex<Int64?>

    /// A wall clock this close to the server's is left alone (the server's `Date` is to the second).
    public static let tolerance: Duration = .seconds(5)

    /// - Parameters:
    ///   - node: this device's id (letters, digits, `_`; at most 64 characters).
    ///   - resumingAfter: the newest stamp this device stored before, so that a restart never goes back.
    public init(
        node: String,
        resumingAfter stamp: HLCStamp? = nil,
        maxDrift: Duration = .seconds(300),
        serverOffset: Int64? = nil,
        wallClock: @escaping @Sendable () -> Int64 = { UnixMillis.now() }
    ) {
        self.node = node
        self.maxDrift = maxDrift
        self.wallClock = wallClock
        self.last = Mutex(stamp ?? HLCStamp(millis: 0, counter: 0, node: node))
        self.offset = Mutex(serverOffset)
    }

    /// Takes in the server's time now (Unix milliseconds, from its last answer).
    public func learn(serverNow: Int64) {
        let offset = serverNow - wallClock()
        self.offset.withLock { $0 = offset }
    }

    /// How far the server's clock is ahead of this device's (negative: the device is ahead), in
    /// milliseconds, as last learned; nil before any answer told it.
    public var serverOffset: Int64? { offset.withLock { $0 } }

    /// Unix milliseconds now: the wall clock's, or the server's when the wall clock is off by more
    /// than `tolerance`.
    public func now() -> Int64 {
        let wall = wallClock()
        guard let offset = serverOffset, abs(offset) > Self.tolerance.milliseconds else { return wall }
        return wall + offset
    }

    /// A new stamp for a local event, greater than every stamp issued or received so far, unless
    /// those lie too far ahead of the server's time to be accepted: then it starts again from now.
    public func tick() -> HLCStamp {
        let now = now()
        // NB: a stamp this far ahead was made while the clock was wrong; staying after it would
        // have the server refuse every later edit of this device ("N s ahead of the server's clock").
        let limit = now + maxDrift.milliseconds - maxDrift.milliseconds / 10
        return last.withLock { last in
            let next: HLCStamp
            if now > last.millis || last.millis > limit {
                next = HLCStamp(millis: now, counter: 0, node: node)
            } else if last.counter < HLCStamp.maxCounter {
                next = HLCStamp(millis: last.millis, counter: last.counter + 1, node: node)
            } else {
                // NB: 100,000 stamps in one millisecond: borrow the next millisecond rather than wrap.
                next = HLCStamp(millis: last.millis + 1, counter: 0, node: node)
            }
            last = next
            return next
        }
    }

    /// Takes in a stamp seen from another device, so that later local stamps order after it.
    /// Throws when it lies further in the future than `maxDrift`: one device with a wrong
    /// clock must not poison every later edit.
    public func receive(_ remote: HLCStamp) throws(ClockError) {
        let now = now()
        let limit = now + maxDrift.milliseconds
        guard remote.millis <= limit else {
            throw ClockError.tooFarInFuture(stamp: remote.description, aheadBySeconds: (remote.millis - now) / 1000)
        }
        last.withLock { last in
            if remote > last { last = HLCStamp(millis: remote.millis, counter: remote.counter, node: node) }
        }
    }

    /// The newest stamp issued or received.
    public var latest: HLCStamp { last.withLock { $0 } }
}

/// A stamp the clock refuses.
public enum ClockError: Error, Equatable, CustomStringConvertible {
    case tooFarInFuture(stamp: String, aheadBySeconds: Int64)

    public var description: String {
        switch self {
        case .tooFarInFuture(let stamp, let ahead):
            return "A change stamped \(stamp) is \(ahead) s ahead of this device's clock; check the other device's date and time"
        }
    }
}
