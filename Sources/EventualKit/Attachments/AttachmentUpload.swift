import EventualAPI
import Foundation

/// The outbox call that uploads an attachment, resumably: it asks the server how much of the
/// blob it has (`PUT /v1/attachments/{sha256}`: nothing to send when the space has it already),
/// then sends the rest in chunks (`PATCH …?offset=N`) from the file in the person's folder. A
/// connection cut mid-way loses at most the chunk in flight: the next try asks again and goes on
/// from what the server kept. The server checks the whole against its SHA-256 before it counts.
enum AttachmentUpload {
    static let operation = Attachments.uploadOperation
    /// Bytes per request: small enough that a cut loses little (a cut every 5 MiB costs about 5 %),
    /// large enough that the requests' own cost stays small.
    static let chunkBytes = 256 * 1024

    struct Payload: Codable, Sendable {
        let sha256: String
        /// nil: not known when it was queued (a record moved whose attachment was not on this
        /// device); the copy fetched from `from` says it.
        let size: Int64?
        /// nil: the person's own space.
        let space: String?
        /// Where the blob is on the server already (the space a record moved from), to fetch it
        /// from when the file is not on this device; nil: attached here.
        var from: Origin? = nil
    }

    /// A space the blob is in (`space` nil: the person's own).
    struct Origin: Codable, Sendable {
        let space: String?
    }

    struct Status: Decodable {
        let received: Int64
        let complete: Bool
    }

    struct ErrorAnswer: Decodable {
        let message: String?
        let code: String?
        let received: Int64?
    }

    /// "attachment, 2.4 MiB" (`what`: "photo of item Jam"): an upload as the outbox lists it.
    static func summary(of entry: OutboxEntry, saying what: String = "attachment") -> String? {
        guard let upload = payload(of: entry) else { return nil }
        guard let size = upload.size else { return "\(what), copied from where it was" }
        return "\(what), \(ByteCount.text(size))"
    }

    /// What an upload entry carries; nil for another entry.
    static func payload(of entry: OutboxEntry) -> Payload? {
        guard entry.kind == .call, entry.operation == operation else { return nil }
        return try? JSONDecoder().decode(Payload.self, from: entry.payload)
    }

    /// The handler, reading files from the attachments' folder and talking through their link.
    static func handler(_ attachments: Attachments) -> CallHandler {
        { context in
            let upload = try context.decode(Payload.self)
            guard let reference = AttachmentReference(sha256: upload.sha256) else {
                throw RemoteFailure.rejected(status: 0, message: "The upload names no attachment (\(upload.sha256.prefix(80)))")
            }
            try await fetchIfMissing(upload, reference, into: attachments)
            try await send(upload, from: attachments.file(reference), through: attachments.link)
        }
    }

    /// Brings the blob of an upload queued without its file (a record moved, its attachment
    /// downloaded and evicted or never read here) from the space it is in, so that it can be sent
    /// to the new one. Not there yet (another device has still to upload it): deferred, tried again
    /// later while the rest of the round goes on.
    private static func fetchIfMissing(_ upload: Payload, _ reference: AttachmentReference, into attachments: Attachments) async throws {
        guard let from = upload.from, !FileManager.default.fileExists(atPath: attachments.file(reference).path) else { return }
        do {
            _ = try await attachments.data(reference, space: from.space)
        } catch AttachmentError.notUploadedYet {
            throw CallDeferred("Waits for the device that took the photo to upload it to the space it came from; sent once it has")
        }
    }

    static func send(_ upload: Payload, from file: URL, through link: ServerLink) async throws {
        guard let handle = try? FileHandle(forReadingFrom: file) else {
            // NB: nothing can bring the bytes back: the entry fails with words a person can act on.
            throw RemoteFailure.rejected(status: 0, message: "The attached file is no longer on this device: attach it again")
        }
        defer { try? handle.close() }
        let size: Int64
        if let known = upload.size {
            size = known
        } else {
            size = Int64(try handle.seekToEnd())
        }
        let path = "/v1/attachments/\(upload.sha256)"
        let query = upload.space.flatMap { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) }.map { "space=\($0)&" } ?? ""
        let begin = try JSONEncoder().encode(NewUpload(size: size, space: upload.space))
        let (response, body) = try await link.send(.put, path, json: begin, operationID: "beginAttachment")
        guard response.status == .ok else { throw RemoteFailure.answer(response.status.code, body) }
        var status = try JSONDecoder().decode(Status.self, from: body)
        while !status.complete {
            try handle.seek(toOffset: UInt64(status.received))
            let chunk = try handle.read(upToCount: chunkBytes) ?? Data()
            guard !chunk.isEmpty else {
                throw RemoteFailure.rejected(status: 0, message: "The attached file on this device is shorter than when it was attached")
            }
            let (answer, answerBody) = try await link.send(.patch, "\(path)?\(query)offset=\(status.received)", body: chunk,
                                                           contentType: "application/octet-stream", operationID: "appendAttachment")
            switch answer.status.code {
            case 200:
                status = try JSONDecoder().decode(Status.self, from: answerBody)
            case 409:
                // NB: the server kept another amount (an earlier try's chunk arrived after all): go on from there.
                guard let received = (try? JSONDecoder().decode(ErrorAnswer.self, from: answerBody))?.received else {
                    throw RemoteFailure.answer(409, answerBody)
                }
                status = Status(received: received, complete: false)
            default:
                throw RemoteFailure.answer(answer.status.code, answerBody)
            }
        }
    }

    private struct NewUpload: Encodable {
        let size: Int64
        let space: String?
    }
}
