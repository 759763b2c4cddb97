import EventualAPI
import Foundation
import Logging

extension APIService {
    static let maxPhotoBytes = 4 * 1024 * 1024

    func postRecyclingScan(_ input: Operations.PostRecyclingScan.Input) async throws -> Operations.PostRecyclingScan.Output {
        guard case .json(let body) = input.body else { throw APIError.badRequest("expected a JSON body") }
        // Characters first (a NUL must never reach the database), then the token, then the rest.
        try Self.checkID(body.id, field: "id")
        if let pointID = body.pointId { try Self.checkID(pointID, field: "pointId") }
        if let zone = body.timeZone { try TextRules.check(zone, field: "timeZone") }
        let userID = try await authenticatedUserID()
        let timeZone = try Self.timeZone(body.timeZone)
        let position = try Self.position(latitude: body.latitude, longitude: body.longitude)
        let gtin = try body.barcode.map { barcode throws(APIError) in try GTIN(validating: barcode) }
        guard body.photo == nil || body.photoAttachment == nil else {
            throw APIError.badRequest("a scan has one photo: photo (base64) or photoAttachment, not both")
        }
        let attached = try body.photoAttachment.map { text throws(APIError) in
            guard let reference = AttachmentReference(parsing: text) else {
                throw APIError.badRequest("photoAttachment must be sha256: and 64 lowercase hex digits")
            }
            return reference
        }
        if body.photo != nil { try Self.checkBase64PhotoStillAccepted(now: Date()) }
        let inline = try body.photo.map { text throws(APIError) in try Self.photo(base64: text) }
        guard gtin != nil || inline != nil || attached != nil else { throw APIError.badRequest("a scan needs a barcode or a photo (or both)") }
        let now = Date()
        guard body.takenAt.timeIntervalSince(now) <= Double(recycling.maxClockDrift.components.seconds) else {
            throw APIError.badRequest("takenAt is in the future: check the device's clock")
        }
        guard now.timeIntervalSince(body.takenAt) <= Double(recycling.maxScanAge.components.seconds) else {
            throw APIError.badRequest("takenAt is more than \(recycling.maxScanAge.components.seconds / 86_400) days ago: such an old scan is not scored")
        }

        // A replayed scan id answers its first result, without asking the model again.
        if let first = try await recycling.scans.stored(userID: userID, scanID: body.id) { return .ok(.init(body: .json(first))) }
        var photo = inline
        if photo == nil, let attached { photo = try await attachedPhoto(attached, of: userID) }

        let classification = try await recycling.classifier.classify(barcode: gtin, photo: photo, at: position)

        let scan = ScanStore.Scan(userID: userID, id: body.id, takenAt: UnixMillis.milliseconds(body.takenAt), timeZone: timeZone.identifier,
                                  localDay: LocalDay(body.takenAt, in: timeZone), barcode: gtin?.normalized)
        return .ok(.init(body: .json(try await recycling.scans.record(scan, classification))))
    }

    /// A time zone the client named (UTC when it named none), or a 400.
    static func timeZone(_ identifier: String?) throws(APIError) -> TimeZone {
        guard let identifier else { return TimeZone(identifier: "UTC")! }
        try TextRules.check(identifier, field: "timeZone")
        let allowed = identifier.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "_+-/".unicodeScalars.contains(scalar))
        }
        guard allowed, identifier.unicodeScalars.count <= 64, !identifier.isEmpty, let zone = TimeZone(identifier: identifier) else {
            throw .badRequest("timeZone must be an IANA time zone such as Europe/Paris or America/Bogota")
        }
        return zone
    }

    private static func position(latitude: Double?, longitude: Double?) throws(APIError) -> GeoPosition? {
        switch (latitude, longitude) {
        case (nil, nil):
            return nil
        case (let latitude?, let longitude?):
            let position = GeoPosition(latitude: latitude, longitude: longitude)
            guard position.isValid else { throw .badRequest("latitude must be from -90 to 90 and longitude from -180 to 180") }
            return position
        default:
            throw .badRequest("latitude and longitude go together: send both or neither")
        }
    }

    /// The bytes of a scan's photo uploaded as an attachment of the person's own space; a 409
    /// when it is not uploaded yet (the device sends the scan again once it is).
    private func attachedPhoto(_ reference: AttachmentReference, of userID: String) async throws -> (data: Data, mimeType: String) {
        let content: (status: AttachmentStatus, range: AttachmentRange, bytes: AttachmentBytes)
        do {
            content = try await attachments.content(of: reference.sha256, in: userID, for: userID, range: nil)
        } catch let refusal as Refusal {
            guard case .notUploaded = refusal else { throw refusal }
            throw APIError(.conflict, "The scan's photo is not uploaded yet: send the scan again once it is")
        }
        var data = Data(capacity: Int(content.status.size))
        for try await piece in content.bytes { data.append(contentsOf: piece) }
        return (data, content.status.contentType?.rawValue ?? "image/jpeg")
    }

    /// The last day a scan's photo may come in base64 (`photo`), the path of SustainU versions from
    /// before attachments: from the day after, such a scan is a 400 that says to update the app.
    static let base64PhotoLastDay = DateComponents(calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "UTC"),
                                                   year: 2027, month: 6, day: 30).date!

    /// Refuses a base64 photo after `base64PhotoLastDay` (UTC).
    static func checkBase64PhotoStillAccepted(now: Date) throws(APIError) {
        guard now < base64PhotoLastDay.addingTimeInterval(86_400) else {
            throw .badRequest("photo (base64) was accepted until 30 June 2027: update SustainU, which uploads the photo and sends photoAttachment")
        }
    }

    /// A photo checked to be base64 of a JPEG or a PNG of at most 4 MiB.
    private static func photo(base64 text: String) throws(APIError) -> (data: Data, mimeType: String) {
        // NB: base64 is 4 characters per 3 bytes; a text this long cannot hold a photo within the limit.
        guard text.utf8.count <= (maxPhotoBytes + 2) / 3 * 4 + 4 else {
            throw .contentTooLarge("photo is larger than \(maxPhotoBytes / 1024 / 1024) MiB: send a smaller JPEG or PNG")
        }
        guard let data = Data(base64Encoded: text), !data.isEmpty else {
            throw .badRequest("photo must be a JPEG or a PNG image in base64, and this is not base64")
        }
        guard data.count <= maxPhotoBytes else {
            throw .contentTooLarge("photo is larger than \(maxPhotoBytes / 1024 / 1024) MiB: send a smaller JPEG or PNG")
        }
        if data.starts(with: [0xFF, 0xD8, 0xFF]) { return (data, "image/jpeg") }
        if data.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return (data, "image/png") }
        throw .badRequest("photo must be a JPEG or a PNG image (in base64)")
    }
}
