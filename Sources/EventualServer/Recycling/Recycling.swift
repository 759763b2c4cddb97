import EventualAPI
import EventualStorage
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
    /// What a scan is and which bin it goes in.
    let classifier: ScanClassifier

    init(database: Database, configuration: ServerConfiguration) throws {
        points = RecyclingPointStore(database: database)
        packaging = PackagingCatalogue(database: database)
        scans = ScanStore(database: database)
        vision = try configuration.vision.map(VisionClient.init)
        maxClockDrift = configuration.maxClockDrift
        maxScanAge = configuration.appliedChangeRetention
        wholeSet = WholeSetCache()
        classifier = ScanClassifier(products: ProductStore(database: database), packaging: packaging, points: points, vision: vision)
    }
}
