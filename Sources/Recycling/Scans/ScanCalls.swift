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
    /// The photo's file name in the user's scans folder (scans queued before attachments).
    let photoFile: String?
    /// The photo as an attachment (`sha256:<digest>`), its upload queued before the scan.
    var photoAttachment: String?
    let pointId: String?
    let latitude: Double?
    let longitude: Double?
    /// This device's own clock when the scan was taken (nil in scans queued by older versions).
    var deviceTakenAt: Int64?
    /// False when `takenAt` rests on no trusted knowledge of the server's time: the process that
    /// sends it corrects it by the offset the server tells it then (see ScanClock).
    var clockSure: Bool?
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
    ///   - clock: the time a scan is sent with.
    static func handlers(scanClient: Client, photos: URL, attachments: URL, clock: ScanClock) -> [String: CallHandler] {
        [
            scan: { context in try await runScan(context, client: scanClient, photos: photos, attachments: attachments, clock: clock) },
            visit: runVisit,
        ]
    }

    static func runScan(_ context: CallContext, client: Client, photos: URL, attachments: URL, clock: ScanClock) async throws {
        let call = try context.decode(ScanCall.self)
        var photo: String?
        if let file = call.photoFile {
            let url = photos.appendingPathComponent(file)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw RemoteFailure.rejected(status: 0, message: "The photo of this scan is gone from \(url.path)")
            }
            photo = data.base64EncodedString()
        }
        if let reference = call.photoAttachment.flatMap(AttachmentReference.init(parsing:)) {
            // NB: the server classifies the photo once it has it: a scan never goes before its photo.
            switch try await context.upload(of: reference) {
            case .uploadRefused(let reason)?:
                throw RemoteFailure.rejected(status: 0, message: "Its photo was refused: \(reason)")
            case .waitingToUpload?:
                throw CallDeferred("Waits for its photo to be uploaded")
            default:
                break
            }
        }
        if clock.serverNow() == nil {
            // NB: before the first answer of this process, a look at the server's health (through
            // the engine's own client) tells the server's time, which this scan's stamp may need,
            // and finds a silent server in the usual 5 s, not the 25 s kept for the vision model.
            _ = try await context.client.getHealth()
        }
        // NB: a scan stamped without the server's time is corrected by it now, and none is sent
        // as taken after the server's now: it would be refused for good as taken in the future.
        var takenAt = clock.sendingTime(takenAt: call.takenAt, deviceTakenAt: call.deviceTakenAt, sure: call.clockSure)
        let result: Components.Schemas.ScanResult
        do {
            result = try await post(call, takenAt: takenAt, photo: photo, attachment: call.photoAttachment, client: client)
        } catch let failure as RemoteFailure where (photo != nil || call.photoAttachment != nil) && call.barcode != nil
                    && Self.isPhotoRefusal(failure) {
            // NB: a server without a vision model refuses the photo, not the barcode found in it:
            // the barcode alone gets the answer it can give (the packaging, or that it is not known).
            try? await context.store.write { tx in try Self.setPhotosUnclassified(true, tx.db) }
            result = try await post(call, takenAt: takenAt, photo: nil, attachment: nil, client: client)
        } catch let failure as RemoteFailure where Self.isPhotoRefusal(failure) {
            try? await context.store.write { tx in try Self.setPhotosUnclassified(true, tx.db) }
            throw failure
        } catch let failure as RemoteFailure where Self.isFutureRefusal(failure) {
            // NB: the refusal's answer told this process the server's time: once more by it.
            let corrected = clock.sendingTime(takenAt: takenAt, deviceTakenAt: call.deviceTakenAt, sure: call.clockSure)
            guard corrected < takenAt else { throw failure }
            takenAt = corrected
            result = try await post(call, takenAt: takenAt, photo: photo, attachment: call.photoAttachment, client: client)
        }
        let now = UnixMillis.now()
        try await context.store.write { [takenAt] tx in
            try ScanStore.record(result, scanID: call.scanId, takenAt: takenAt, answeredAt: now, tx.db)
            if result.source == .vision { try Self.setPhotosUnclassified(false, tx.db) }
        }
        if let reference = call.photoAttachment.flatMap(AttachmentReference.init(parsing:)),
           (try? await context.store.write({ tx in try tx.forgetAttachment(reference) })) == true {
            // NB: the photo was only kept to be classified; the result is what the person keeps.
            try? FileManager.default.removeItem(at: attachments.appendingPathComponent(reference.sha256))
        }
        if let file = call.photoFile {
            // NB: the photo was only kept to be sent; the result is what the person keeps.
            try? FileManager.default.removeItem(at: photos.appendingPathComponent(file))
            try await context.store.write { tx in
                try tx.db.execute(sql: "UPDATE scans SET photo_file = NULL WHERE id = ?", arguments: [call.scanId])
            }
        }
    }

    private static func post(_ call: ScanCall, takenAt: Int64, photo: String?, attachment: String?, client: Client) async throws
        -> Components.Schemas.ScanResult {
        let body = Components.Schemas.NewScan(
            id: call.scanId, takenAt: Date(timeIntervalSince1970: Double(takenAt) / 1000), timeZone: call.timeZone,
            barcode: call.barcode, photo: photo, photoAttachment: attachment, pointId: call.pointId, latitude: call.latitude,
            longitude: call.longitude)
        switch try await client.postRecyclingScan(body: .json(body)) {
        case .ok(let answer): return try answer.body.json
        case .badRequest(let answer): throw try answer.body.json.failure
        case .unauthorized(let answer): throw try answer.body.json.failure
        case .conflict(let answer): throw try answer.body.json.failure
        case .unprocessableContent(let answer): throw try answer.body.json.failure
        case .contentTooLarge(let answer): throw try answer.body.json.failure
        case .unsupportedMediaType(let answer): throw try answer.body.json.failure
        case .badGateway(let answer): throw try answer.body.json.failure
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Classifying the scan")
        }
    }

    private static func isPhotoRefusal(_ failure: RemoteFailure) -> Bool {
        if case .rejected(_, let message) = failure { return message.contains("cannot classify photos") }
        return false
    }

    /// Whether the server said it cannot classify photos (so that the app stops suggesting one).
    static let photosUnclassifiedKey = "recycling.photosUnclassified"

    static func setPhotosUnclassified(_ unclassified: Bool, _ db: Database) throws {
        try db.execute(sql: "INSERT INTO device_facts (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                       arguments: [photosUnclassifiedKey, unclassified ? 1 : 0])
    }

    static func photosUnclassified(_ db: Database) throws -> Bool {
        try Int.fetchOne(db, sql: "SELECT value FROM device_facts WHERE key = ?", arguments: [photosUnclassifiedKey]) == 1
    }

    private static func isFutureRefusal(_ failure: RemoteFailure) -> Bool {
        if case .rejected(_, let message) = failure { return message.contains("in the future") }
        return false
    }

    @Sendable static func runVisit(_ context: CallContext) async throws {
        let call = try context.decode(VisitCall.self)
        switch try await context.client.postRecyclingVisit(path: .init(id: call.pointId), body: .json(.init(visitId: call.visitId))) {
        case .ok: return
        case .badRequest(let answer): throw try answer.body.json.failure
        case .unauthorized(let answer): throw try answer.body.json.failure
        case .notFound(let answer): throw try answer.body.json.failure
        case .contentTooLarge(let answer): throw try answer.body.json.failure
        case .unsupportedMediaType(let answer): throw try answer.body.json.failure
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Counting the visit")
        }
    }
}

extension Components.Schemas._Error {
    /// NB: the server names the wire's fields ("takenAt is more than 30 days ago"); the person
    /// reads "taken more than 30 days ago".
    var failure: RemoteFailure { .status(statusCode, message: message.replacingOccurrences(of: "takenAt is ", with: "taken ")) }
}
