import EventualAPI
import EventualKit
import Foundation
import GRDB

/// The time a scan was taken, as the server should score it, from a device whose clock may be wrong.
///
/// The server's time is trusted when an answer in this process told it, or when it was learned
/// recently and this device's clock has run on from then (not been set back, not jumped ahead):
/// an offset learned before the clock was corrected would move every scan by the old error.
/// A scan stamped without a trusted offset carries the device's own time, and is corrected by the
/// offset the server tells the process that sends it (the device's clock is most likely still as
/// wrong as when the scan was made).
struct ScanClock: Sendable {
    let store: LocalStore
    /// This device's clock, in Unix milliseconds.
    let wallClock: @Sendable () -> Int64
    /// The server's time now, if an answer in this process told it.
    let serverNow: @Sendable () -> Int64?

    /// A clock this close to the server's is left alone (the server's `Date` is to the second).
    static let tolerance = HybridLogicalClock.tolerance.milliseconds
    /// How long a saved offset is trusted, while this device's clock has run on from it.
    static let savedOffsetLife: Int64 = 3_600_000

    /// A scan's stamp: the time to send, this device's own time, and whether the first rests on
    /// a trusted knowledge of the server's time.
    struct Stamp: Sendable {
        let takenAt: Int64
        let deviceTakenAt: Int64
        let sure: Bool
    }

    /// The stamp of a scan taken now.
    func stamp() -> Stamp {
        let wall = wallClock()
        guard let offset = trustedOffset(wall: wall) else {
            // NB: never told the server's time: the device's own is the only guess; one told long
            // ago is not trusted, and the sending process corrects the stamp.
            return Stamp(takenAt: wall, deviceTakenAt: wall, sure: false)
        }
        return Stamp(takenAt: abs(offset) > Self.tolerance ? wall + offset : wall, deviceTakenAt: wall, sure: true)
    }

    /// The time to send for a queued scan: corrected by the server's time this process learned
    /// when it was stamped without it, and never after the server's now.
    func sendingTime(takenAt: Int64, deviceTakenAt: Int64?, sure: Bool?) -> Int64 {
        let wall = wallClock()
        guard let serverNow = serverNow() else { return takenAt }
        var time = takenAt
        if sure == false, let device = deviceTakenAt {
            let offset = serverNow - wall
            time = abs(offset) > Self.tolerance ? device + offset : device
        }
        return min(time, serverNow)
    }

    /// How far this device's clock is ahead of the server's (negative: behind), in seconds, when
    /// off by more than the tolerance, as known now.
    func deviceAheadBySeconds() -> Int64? {
        guard let offset = trustedOffset(wall: wallClock()), abs(offset) > Self.tolerance else { return nil }
        return -offset / 1000
    }

    /// Keeps the server's time learned in this process for the next one.
    func remember() async {
        guard let serverNow = serverNow() else { return }
        let wall = wallClock()
        try? await store.write { tx in
            try tx.db.execute(sql: """
                INSERT INTO device_clock (id, offset_ms, learned_at) VALUES (1, ?, ?)
                ON CONFLICT (id) DO UPDATE SET offset_ms = excluded.offset_ms, learned_at = excluded.learned_at
                """, arguments: [serverNow - wall, wall])
        }
    }

    /// The server's time minus this device's: as this process learned it, or as saved when it is
    /// recent and this device's clock has not been set back since.
    private func trustedOffset(wall: Int64) -> Int64? {
        if let serverNow = serverNow() { return serverNow - wall }
        guard let saved = try? store.reader.read({ db in
            try Row.fetchOne(db, sql: "SELECT offset_ms, learned_at FROM device_clock WHERE id = 1")
        }) else { return nil }
        let offset: Int64 = saved["offset_ms"], learnedAt: Int64 = saved["learned_at"]
        let elapsed = wall - learnedAt
        return (0...Self.savedOffsetLife).contains(elapsed) ? offset : nil
    }
}
