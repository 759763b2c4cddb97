import EventualAPI
import Foundation
import Logging

/// What the recycling handlers need, built once with the server.
struct Recycling: Sendable {
    let points: RecyclingPointStore
    let packaging: PackagingCatalogue
    let scans: ScanStore
    /// Nil when no vision model is configured: photos are then answered 422.
    let vision: VisionClient?
    /// How far ahead of the server's clock a scan's `takenAt` may be.
    let maxClockDrift: Duration
    /// How old a scan's `takenAt` may be (the longest a device may stay offline).
    let maxScanAge: Duration
    let wholeSet: WholeSetCache

    init(database: Database, configuration: ServerConfiguration) throws {
        points = RecyclingPointStore(database: database)
        packaging = PackagingCatalogue(database: database)
        scans = ScanStore(database: database)
        vision = try configuration.vision.map(VisionClient.init)
        maxClockDrift = configuration.maxClockDrift
        maxScanAge = configuration.appliedChangeRetention
        wholeSet = WholeSetCache()
    }
}

/// ETags as `If-None-Match` sends them back: one, a list, weak or strong, or `*`.
enum ETag {
    static func matches(_ header: String?, _ etag: String) -> Bool {
        guard let header else { return false }
        for candidate in header.split(separator: ",") {
            var value = candidate.trimmingCharacters(in: .whitespaces)
            if value == "*" { return true }
            if value.hasPrefix("W/") { value.removeFirst(2) }
            if value == etag { return true }
        }
        return false
    }
}
