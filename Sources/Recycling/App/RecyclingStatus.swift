import EventualAPI
import EventualKit
import Foundation

/// What `sustainu status` shows (scenario 2 of the sprint page: the banner, and what works offline).
public struct RecyclingStatus: Sendable, Equatable {
    /// Online or offline, the outbox, the last sync.
    public let device: DeviceStatus
    public let waitingScans: Int
    /// Unix milliseconds when the points were last confirmed by the server; nil before the first load.
    public let pointsSavedAt: Int64?
    /// Barcodes the device can answer offline.
    public let packagingEntries: Int

    /// What cannot be done until the server can be reached.
    public static let onlineOnly = ["register", "leaderboard (a saved copy is shown)", "score updates (a saved copy is shown)",
                                    "classifying photos (they wait and are sent later)"]
}
