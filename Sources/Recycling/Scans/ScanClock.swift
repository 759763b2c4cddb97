import EventualAPI
import EventualKit
import Foundation

/// The time a scan was taken, as the server should score it, from a device whose clock may be
/// wrong, over the engine's clock (`DeviceClock`: the server's time as this process or a recent
/// one learned it, while this device's clock has run on from then).
///
/// A scan stamped without a trusted offset carries the device's own time, and is corrected by the
/// offset the server tells the process that sends it (the device's clock is most likely still as
/// wrong as when the scan was made).
struct ScanClock: Sendable {
    let clock: DeviceClock

    /// A clock this close to the server's is left alone (the server's `Date` is to the second).
    static let tolerance = DeviceClock.tolerance.milliseconds

    /// A scan's stamp: the time to send, this device's own time, and whether the first rests on
    /// a trusted knowledge of the server's time.
    struct Stamp: Sendable {
        let takenAt: Int64
        let deviceTakenAt: Int64
        let sure: Bool
    }

    /// The server's time now, if an answer in this process told it.
    func serverNow() -> Int64? { clock.serverNow() }

    /// The stamp of a scan taken now.
    func stamp() -> Stamp {
        let wall = clock.deviceNow()
        guard let offset = clock.offset(at: wall) else {
            // NB: never told the server's time: the device's own is the only guess; one told long
            // ago is not trusted, and the sending process corrects the stamp.
            return Stamp(takenAt: wall, deviceTakenAt: wall, sure: false)
        }
        return Stamp(takenAt: abs(offset) > Self.tolerance ? wall + offset : wall, deviceTakenAt: wall, sure: true)
    }

    /// The time to send for a queued scan: corrected by the server's time this process learned
    /// when it was stamped without it, and never after the server's now.
    func sendingTime(takenAt: Int64, deviceTakenAt: Int64?, sure: Bool?) -> Int64 {
        let wall = clock.deviceNow()
        guard let serverNow = clock.serverNow() else { return takenAt }
        var time = takenAt
        if sure == false, let device = deviceTakenAt {
            let offset = serverNow - wall
            time = abs(offset) > Self.tolerance ? device + offset : device
        }
        return min(time, serverNow)
    }
}
