import EventualAPI
import EventualKit
import Foundation
import GRDB

/// A scan made on this device, and what is known of it so far.
public struct Scan: Sendable, Equatable, Codable {
    public enum State: String, Sendable, Codable {
        /// Queued: the server has not classified it yet.
        case waiting
        /// The server answered.
        case classified
        /// The server refused it for good; `reason` says why.
        case failed
    }

    public let id: String
    /// Unix milliseconds.
    public let takenAt: Int64
    public let state: State
    /// The server's answer, or while waiting the device's guess from the packaging catalogue.
    public let trashType: String?
    /// "grey", "blue", "green", "yellow" or "special".
    public let bin: String?
    public let binLabel: String?
    /// Points earned (nil until classified).
    public let points: Int?
    /// The trash type and bin are the device's guess, to be confirmed when the server is reached.
    public let offlineGuess: Bool
    /// What happened, for people: the server's message, the guess's basis, or the failure's reason.
    public let message: String?
    public let barcode: String?
    /// The point where the item was thrown, if given.
    public let pointId: String?
    /// For special waste: the nearest point that accepts it, if the server named one (its title).
    public let specialPoint: String?
    /// That point's id, for `sustainu point` (nil: none, or a scan answered before it was kept).
    public let specialPointId: String?
    /// How far that point is from where the scan was taken, in metres (nil: the scan had no position).
    public let specialPointMeters: Double?
    /// The photo waiting to be sent, in the app's data folder.
    public let photoFile: String?
    /// False when the server found nothing to classify (no item in the photo, or a product whose
    /// packaging is not known); nil until the server answered.
    public let detected: Bool?
    /// What the server's answer came from: "barcode", "vision" or "none" (a barcode whose
    /// packaging it does not know, without a photo); nil until it answered.
    public let source: String?
    /// The parts of a scanned product's packaging, each with its own bin: the server's, or while
    /// waiting the saved catalogue's. Empty when not known.
    public let parts: [PackagingPart]
    /// The product's name, when the server knows the scanned barcode.
    public let productName: String?

    init(row: Row, failure: String?) {
        id = row["id"]
        takenAt = row["taken_at"]
        barcode = row["barcode"]
        pointId = row["point_id"]
        photoFile = row["photo_file"]
        specialPoint = row["special_point"]
        specialPointId = row["special_point_id"]
        specialPointMeters = row["special_point_meters"]
        parts = (row["parts"] as String?).flatMap { try? JSONDecoder().decode([PackagingPart].self, from: Data($0.utf8)) } ?? []
        let answered = row["answered_at"] as Int64? != nil
        detected = answered ? (row["detected"] as Bool?) : nil
        source = answered ? row["source"] : nil
        productName = row["product_name"]
        if answered {
            state = .classified
            trashType = row["trash_type"]
            bin = row["bin"]
            binLabel = row["bin_label"]
            points = row["points"]
            offlineGuess = false
            message = row["message"]
        } else {
            state = failure == nil ? .waiting : .failed
            let guess = (row["guess_trash_type"] as String?).flatMap(TrashType.init(rawValue:))
            trashType = guess?.rawValue
            bin = guess?.bin.colour
            binLabel = guess?.bin.label
            points = nil
            offlineGuess = guess != nil
            message = failure ?? (guess != nil ? "offline guess, confirmed when back online" : "waiting to be classified")
        }
    }
}

/// What `scan` answers at once.
public struct ScanOutcome: Sendable {
    public let scan: Scan
    /// False when the server could not be asked in time: the scan waits in the outbox.
    public let sent: Bool
    /// Why it was not sent, if it was not.
    public let reason: String?
}

extension Scan {
    /// Where the scan is on its way to the server: waiting to be sent, refused (with the reason), or answered.
    public var syncState: SyncState {
        switch state {
        case .waiting: .pending(count: 1)
        case .failed: .failed(reason: message ?? "Refused by the server")
        case .classified: .confirmed
        }
    }
}

/// The scans the server answered while the person was away: those it named a bin for, and those
/// it could not classify (nothing seen in the photo, a packaging not known yet).
public struct AnsweredWhileAway: Sendable, Equatable {
    public let classified: Int
    public let unclassified: Int
}
