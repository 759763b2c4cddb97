import EventualAPI
import EventualKit
import Foundation
import GRDB

/// The body of a queued `recycling.scan`.
struct ScanCall: Codable, Sendable {
    let scanId: String
    let takenAt: Int64
    let timeZone: String
    let barcode: String?
    /// The photo's file name in the user's scans folder.
    let photoFile: String?
    let pointId: String?
    let latitude: Double?
    let longitude: Double?
}

/// The body of a queued `recycling.visit`.
struct VisitCall: Codable, Sendable {
    let visitId: String
    let pointId: String
}

/// The queued recycling calls the sync engine runs once the network is back. Each is
/// idempotent on the server by its own id (the scan's, the visit's), so a replay after a lost
/// answer awards and counts nothing twice.
enum ScanCalls {
    static let scan = "recycling.scan"
    static let visit = "recycling.visit"

    /// - Parameters:
    ///   - scanClient: a client patient enough for the vision model (the server may take 20 s).
    ///   - photos: the folder the photos wait in.
    static func handlers(scanClient: Client, photos: URL) -> [String: CallHandler] {
        [
            scan: { context in try await runScan(context, client: scanClient, photos: photos) },
            visit: runVisit,
        ]
    }

    static func runScan(_ context: CallContext, client: Client, photos: URL) async throws {
        let call = try context.decode(ScanCall.self)
        var photo: String?
        if let file = call.photoFile {
            let url = photos.appendingPathComponent(file)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw RemoteFailure.rejected(status: 0, message: "The photo of this scan is gone from \(url.path)")
            }
            photo = data.base64EncodedString()
        }
        // NB: a scan stamped before the engine learned that this device's clock runs fast would be
        // refused for good as taken in the future: it cannot have been taken after the server's now.
        let takenAt = context.store.clock.serverOffset == nil ? call.takenAt : min(call.takenAt, context.store.clock.now())
        let body = Components.Schemas.NewScan(
            id: call.scanId, takenAt: Date(timeIntervalSince1970: Double(takenAt) / 1000), timeZone: call.timeZone,
            barcode: call.barcode, photo: photo, pointId: call.pointId, latitude: call.latitude, longitude: call.longitude)
        let result: Components.Schemas.ScanResult
        switch try await client.postRecyclingScan(body: .json(body)) {
        case .ok(let answer): result = try answer.body.json
        case .badRequest(let answer): throw try answer.body.json.failure
        case .unauthorized(let answer): throw try answer.body.json.failure
        case .unprocessableContent(let answer): throw try answer.body.json.failure
        case .undocumented(let status, _): throw RemoteFailure.status(status, message: "The scan could not be classified now (HTTP \(status))")
        }
        let now = UnixMillis.now()
        try await context.store.write { tx in
            try ScanStore.record(result, scanID: call.scanId, answeredAt: now, tx.db)
        }
        if let file = call.photoFile {
            // NB: the photo was only kept to be sent; the result is what the person keeps.
            try? FileManager.default.removeItem(at: photos.appendingPathComponent(file))
            try await context.store.write { tx in
                try tx.db.execute(sql: "UPDATE scans SET photo_file = NULL WHERE id = ?", arguments: [call.scanId])
            }
        }
    }

    @Sendable static func runVisit(_ context: CallContext) async throws {
        let call = try context.decode(VisitCall.self)
        switch try await context.client.postRecyclingVisit(path: .init(id: call.pointId), body: .json(.init(visitId: call.visitId))) {
        case .ok: return
        case .badRequest(let answer): throw try answer.body.json.failure
        case .unauthorized(let answer): throw try answer.body.json.failure
        case .notFound(let answer): throw try answer.body.json.failure
        case .undocumented(let status, _): throw RemoteFailure.status(status, message: "The visit could not be counted now (HTTP \(status))")
        }
    }
}

extension Components.Schemas._Error {
    var failure: RemoteFailure { .status(statusCode, message: message) }
}
