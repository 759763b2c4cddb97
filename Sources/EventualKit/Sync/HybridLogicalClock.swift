import EventualAPI
import Foundation
import Synchronization

/// Stamps the user's edits so that they order causally across devices: a stamp is never
/// smaller than one this device issued or saw before, even if the wall clock steps back.
public final class HybridLogicalClock: Sendable {
    /// A remote stamp further ahead of the local wall clock than this is refused.
    public let maxDrift: Duration
    public let node: String
    private let wallClock: @Sendable () -> Int64
    private let last: Mutex<HLCStamp>

    /// - Parameters:
    ///   - node: this device's id (letters, digits, `_`; at most 64 characters).
    ///   - resumingAfter: the newest stamp this device stored before, so that a restart never goes back.
    public init(
        node: String,
        resumingAfter stamp: HLCStamp? = nil,
        maxDrift: Duration = .seconds(300),
        wallClock: @escaping @Sendable () -> Int64 = { UnixMillis.now() }
    ) {
        self.node = node
        self.maxDrift = maxDrift
        self.wallClock = wallClock
        self.last = Mutex(stamp ?? HLCStamp(millis: 0, counter: 0, node: node))
    }

    /// A new stamp for a local event, greater than every stamp issued or received so far.
    public func tick() -> HLCStamp {
        let now = wallClock()
        return last.withLock { last in
            let next: HLCStamp
            if now > last.millis {
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
        let now = wallClock()
        let limit = now + Int64(maxDrift.components.seconds * 1000)
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
