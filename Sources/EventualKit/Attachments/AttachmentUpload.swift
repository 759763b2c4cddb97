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
        let size: Int64
        /// nil: the person's own space.
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

    /// "photo, 2.4 MiB": an upload as the outbox lists it.
    static func summary(of entry: OutboxEntry) -> String? {
        guard entry.kind == .call, entry.operation == operation,
              let upload = try? JSONDecoder().decode(Payload.self, from: entry.payload) else { return nil }
        return "attachment, \(AttachmentError.mebibytesText(upload.size))"
    }

    /// The handler, reading files from `folder` and talking through `link`.
    static func handler(folder: URL, link: ServerLink) -> CallHandler {
        { context in
            let upload = try context.decode(Payload.self)
            try await send(upload, from: folder.appendingPathComponent(upload.sha256), through: link)
        }
    }

    static func send(_ upload: Payload, from file: URL, through link: ServerLink) async throws {
        guard let handle = try? FileHandle(forReadingFrom: file) else {
            // NB: nothing can bring the bytes back: the entry fails with words a person can act on.
            throw RemoteFailure.rejected(status: 0, message: "The attached file is no longer on this device: attach it again")
        }
        defer { try? handle.close() }
        let path = "/v1/attachments/\(upload.sha256)"
        let query = upload.space.flatMap { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) }.map { "space=\($0)&" } ?? ""
        let begin = try JSONEncoder().encode(NewUpload(size: upload.size, space: upload.space))
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
