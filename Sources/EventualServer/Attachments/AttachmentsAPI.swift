import EventualAPI
import Foundation
import NIOCore
import OpenAPIRuntime

extension APIService {
    func beginAttachment(_ input: Operations.BeginAttachment.Input) async throws -> Operations.BeginAttachment.Output {
        guard case .json(let body) = input.body else { throw APIError.badRequest("expected a JSON body") }
        let sha256 = try Self.sha256(input.path.sha256)
        let limit = attachments.limits.maxBytes
        guard body.size >= 1 else { throw APIError.badRequest("size must be at least 1 byte") }
        guard body.size <= limit else {
            throw APIError.contentTooLarge("An attachment is at most \(ByteCount.text(limit)); this one is \(ByteCount.text(body.size))")
        }
        let userID = try await authenticatedUserID()
        let space = try body.space.map { try SpaceRules.id($0, field: "space") } ?? userID
        let status = try await attachments.begin(sha256, size: body.size, in: space, by: userID, byteQuota: quotas.bytesPerUser,
                                                 now: UnixMillis.now())
        return .ok(.init(body: .json(.init(status))))
    }

    func getAttachmentStatus(_ input: Operations.GetAttachmentStatus.Input) async throws -> Operations.GetAttachmentStatus.Output {
        let sha256 = try Self.sha256(input.path.sha256)
        let userID = try await authenticatedUserID()
        let space = try input.query.space.map { try SpaceRules.id($0, field: "space") } ?? userID
        return .ok(.init(body: .json(.init(try await attachments.status(of: sha256, in: space, for: userID)))))
    }

    func appendAttachment(_ input: Operations.AppendAttachment.Input) async throws -> Operations.AppendAttachment.Output {
        let sha256 = try Self.sha256(input.path.sha256)
        guard input.query.offset >= 0 else { throw APIError.badRequest("offset must be 0 or more") }
        guard case .binary(let body) = input.body else { throw APIError.badRequest("expected an application/octet-stream body") }
        let limit = attachments.limits.maxChunkBytes
        let bytes: [UInt8]
        do {
            // NB: the edge has read the body already (at most the same limit); this only copies it.
            bytes = try await [UInt8](collecting: body, upTo: limit)
        } catch {
            throw APIError.contentTooLarge("A chunk of an attachment is at most \(limit / 1024) KiB: send smaller ones")
        }
        let userID = try await authenticatedUserID()
        let space = try input.query.space.map { try SpaceRules.id($0, field: "space") } ?? userID
        let status = try await attachments.append(ByteBuffer(bytes: bytes), at: input.query.offset, to: sha256, in: space, by: userID,
                                                  byteQuota: quotas.bytesPerUser, now: UnixMillis.now())
        return .ok(.init(body: .json(.init(status))))
    }

    func getAttachmentContent(_ input: Operations.GetAttachmentContent.Input) async throws -> Operations.GetAttachmentContent.Output {
        let sha256 = try Self.sha256(input.path.sha256)
        let userID = try await authenticatedUserID()
        let space = try input.query.space.map { try SpaceRules.id($0, field: "space") } ?? userID
        if let range = input.headers.range, range.unicodeScalars.count > Self.longestRange {
            throw APIError.badRequest("Range must be at most \(Self.longestRange) characters long, like bytes=0-1023")
        }
        let content = try await attachments.content(of: sha256, in: space, for: userID, range: input.headers.range)
        let body = HTTPBody(content.bytes, length: .known(content.bytes.count), iterationBehavior: .single)
        let contentType = content.status.contentType ?? .jpeg
        switch content.range {
        case .whole:
            return .ok(.init(body: Self.okBody(body, contentType)))
        case .part(let first, let last):
            return .partialContent(.init(headers: .init(contentRange: "bytes \(first)-\(last)/\(content.status.size)"),
                                         body: Self.partialBody(body, contentType)))
        }
    }

    /// The longest `Range` header read (the contract's `maxLength`).
    static let longestRange = 200

    /// The digest of a path: 64 lowercase hex digits, or a 400.
    private static func sha256(_ raw: String) throws(APIError) -> String {
        guard AttachmentReference.isDigest(raw) else {
            throw .badRequest("sha256 must be the attachment's SHA-256 in 64 lowercase hex digits")
        }
        return raw
    }

    private static func okBody(_ body: HTTPBody, _ type: AttachmentContentType) -> Operations.GetAttachmentContent.Output.Ok.Body {
        switch type {
        case .jpeg: .jpeg(body)
        case .png: .png(body)
        case .heic: .imageHeic(body)
        }
    }

    private static func partialBody(_ body: HTTPBody, _ type: AttachmentContentType)
        -> Operations.GetAttachmentContent.Output.PartialContent.Body
    {
        switch type {
        case .jpeg: .jpeg(body)
        case .png: .png(body)
        case .heic: .imageHeic(body)
        }
    }
}

extension Components.Schemas.AttachmentStatus {
    init(_ status: AttachmentStatus) {
        self.init(sha256: status.sha256, space: status.space, size: status.size, received: status.received, complete: status.complete,
                  contentType: status.contentType?.rawValue)
    }
}
