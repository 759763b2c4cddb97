import EventualAPI
import EventualKit
import Foundation

/// What `sustainu status` shows (scenario 2 of the sprint page: the banner, and what works offline).
public struct RecyclingStatus: Sendable, Equatable {
    public let connectivity: Connectivity
    public let pending: Int
    public let failed: Int
    /// Every outbox entry, oldest first.
    public let entries: [StatusLine]
    public let waitingScans: Int
    /// Unix milliseconds when the points were last confirmed by the server; nil before the first load.
    public let pointsSavedAt: Int64?
    /// Barcodes the device can answer offline.
    public let packagingEntries: Int
    public let lastSyncAt: Int64?
    /// Sign-outs the server has not heard of yet.
    public let pendingRevocations: Int

    /// What cannot be done until the server can be reached.
    public static let onlineOnly = ["register", "leaderboard (a saved copy is shown)", "score updates (a saved copy is shown)",
                                    "classifying photos (they wait and are sent later)"]
}

/// What became of a refused scan or visit sent again.
public enum RetryOutcome: Sendable, Equatable {
    /// The server took it.
    case sent
    /// It waits for the next sync (offline, or the server is slow).
    case waiting
    /// The server refused it again, for this reason.
    case refused(String)
}

/// One outbox entry, said for people.
public struct StatusLine: Sendable, Equatable, Codable {
    public let id: String
    /// The last characters of the id, as `retry` and `discard` take it.
    public let shortID: String
    /// "pending" or "failed".
    public let state: String
    /// "scan of a photo (Nov 23 10:02)", "visit to a point".
    public let summary: String
    public let attempts: Int
    public let lastError: String?

    init(entry: OutboxEntry, store: LocalStore) throws {
        id = entry.id
        shortID = entry.shortID
        state = entry.state == .failed ? "failed" : "pending"
        attempts = entry.attempts
        lastError = entry.lastError
        if entry.operation == ScanCalls.scan, let call = try? JSONDecoder().decode(ScanCall.self, from: entry.payload) {
            let what = call.photoFile != nil ? "photo" : "barcode \((try? GTIN(call.barcode ?? "").shortForm) ?? call.barcode ?? "")"
            summary = "scan of a \(what)"
        } else if entry.operation == ScanCalls.visit, let call = try? JSONDecoder().decode(VisitCall.self, from: entry.payload) {
            summary = "visit to \(call.pointId)"
        } else {
            summary = entry.operation
        }
    }
}
