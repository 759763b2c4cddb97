import EventualAPI
import GRDB
import Synchronization

/// The server's time as well as this device knows it, in this process and across processes.
///
/// An answer in this process tells it (`ServerTime`); without one, the offset an earlier process
/// learned is trusted when it was learned within `savedOffsetLife` and this device's clock has run
/// on from then (not been set back, not jumped ahead): an offset learned before the clock was
/// corrected would move every time by the old error. The engine saves the offset whenever an
/// answer of a link this clock listens to tells the server's time: an app never saves it.
public final class DeviceClock: Sendable {
    /// A clock this close to the server's is left alone (the server's `Date` is to the second).
    public static let tolerance = HybridLogicalClock.tolerance
    /// How long a saved offset is trusted, while this device's clock has run on from it.
    public static let savedOffsetLife: Duration = .seconds(3600)

    private let store: LocalStore
    private let wallClock: @Sendable () -> Int64
    private let told: @Sendable () -> Int64?
    private let links = Mutex<[ServerTime]>([])

    /// - Parameters:
    ///   - wallClock: this device's clock in Unix milliseconds (nil: the store's).
    ///   - serverNow: the server's time now as something other than a link knows it (a test's).
    public init(store: LocalStore, wallClock: (@Sendable () -> Int64)? = nil, serverNow: @escaping @Sendable () -> Int64? = { nil }) {
        self.store = store
        self.wallClock = wallClock ?? store.wallClock
        self.told = serverNow
    }

    /// Hears the server's time from `serverTime`'s answers, and saves it for the next process.
    /// The links listened to first are asked first; listening twice to one is listening once.
    public func listen(to serverTime: ServerTime) {
        let isNew = links.withLock { links in
            guard !links.contains(where: { $0 === serverTime }) else { return false }
            links.append(serverTime)
            return true
        }
        guard isNew else { return }
        serverTime.tell(self)
        // NB: a sign-in's answer came before the person's store was open: it is the first the
        // device hears of the server's time, and a command may make no other request.
        if let serverNow = serverTime.now() { try? store.learnServerTimeNow(serverNow) }
    }

    /// This device's own clock, in Unix milliseconds.
    public func deviceNow() -> Int64 { wallClock() }

    /// The server's time now, in Unix milliseconds, if an answer in this process told it.
    public func serverNow() -> Int64? {
        if let now = told() { return now }
        return links.withLock { $0 }.lazy.compactMap { $0.now() }.first
    }

    /// The server's time minus this device's at `deviceTime`, in milliseconds: as this process
    /// learned it, or as saved while it is trusted; nil when neither knows it.
    public func offset(at deviceTime: Int64) -> Int64? {
        if let serverNow = serverNow() { return serverNow - deviceTime }
        guard let saved = try? store.reader.read({ db in try ServerClockTable.saved(db) }) else { return nil }
        return (0...Self.savedOffsetLife.milliseconds).contains(deviceTime - saved.learnedAt) ? saved.offsetMs : nil
    }

    /// The server's time minus this device's now, as `offset(at:)`.
    public func offset() -> Int64? { offset(at: deviceNow()) }

    /// The best known server time now, in Unix milliseconds: this device's clock, moved by the
    /// trusted offset when it is off by more than `tolerance`.
    public func now() -> Int64 {
        let wall = deviceNow()
        guard let offset = offset(at: wall), abs(offset) > Self.tolerance.milliseconds else { return wall }
        return wall + offset
    }

    /// A time read from another clock of this device (an app's own, which a test may set to any
    /// day), moved by the trusted offset of this device's clock when it is off by more than
    /// `tolerance`: what a device whose clock runs an hour fast stamps a record of now with.
    public func corrected(_ deviceTime: Int64) -> Int64 {
        guard let offset = offset(), abs(offset) > Self.tolerance.milliseconds else { return deviceTime }
        return deviceTime + offset
    }

    /// How far this device's clock is ahead of the server's (negative: behind), in seconds, when
    /// it is off by more than `tolerance`, as known now.
    public func deviceAheadBySeconds() -> Int64? {
        guard let offset = offset(), abs(offset) > Self.tolerance.milliseconds else { return nil }
        return -offset / 1000
    }

    /// Takes in an offset an app saved itself before the engine kept one (its migration calls
    /// this with its row), unless the engine holds one learned later.
    public static func carryOver(offset: Int64, learnedAt: Int64, _ db: Database) throws {
        if let saved = try ServerClockTable.saved(db), saved.learnedAt >= learnedAt { return }
        try ServerClockTable.save(offset: offset, learnedAt: learnedAt, db)
    }

    /// An answer told the server's time (Unix milliseconds then).
    func heard(serverNow: Int64) async {
        try? await store.learnServerTime(serverNow)
    }
}
