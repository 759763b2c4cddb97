import Foundation
import HTTPTypes
import NIOCore
import Testing

struct AttachmentStatusJSON: Decodable, Equatable {
    let sha256: String
    let space: String
    let size: Int64
    let received: Int64
    let complete: Bool
    let contentType: String?
}

/// An error answer with the fields the attachment calls add.
struct AttachmentErrorJSON: Decodable {
    let statusCode: Int
    let message: String
    let code: String?
    let received: Int64?
}

extension API {
    func beginAttachment(_ sha256: String, size: Int64, space: String? = nil, as account: Account) async throws -> Answer {
        let spaceField = space.map { #","space":\#(jsonString($0))"# } ?? ""
        return try await send(.put, "/v1/attachments/\(sha256)", headers: account.bearer, json: #"{"size":\#(size)\#(spaceField)}"#)
    }

    func appendAttachment(_ sha256: String, offset: Int64, _ bytes: some Sequence<UInt8>, space: String? = nil,
                          contentType: String = "application/octet-stream", as account: Account) async throws -> Answer {
        var headers = account.bearer
        headers[.contentType] = contentType
        return try await client.execute(uri: "/v1/attachments/\(sha256)?offset=\(offset)\(spaceQuery(space, first: false))", method: .patch,
                                        headers: headers, body: ByteBuffer(bytes: Array(bytes))) { response in
            Answer(status: response.status, headers: response.headers, body: response.body)
        }
    }

    /// An append whose `offset` is sent as `offsetText`, as it is.
    func appendAttachment(_ sha256: String, offsetText: String, _ bytes: [UInt8], as account: Account) async throws -> Answer {
        var headers = account.bearer
        headers[.contentType] = "application/octet-stream"
        return try await client.execute(uri: "/v1/attachments/\(sha256)?offset=\(offsetText)", method: .patch, headers: headers,
                                        body: ByteBuffer(bytes: bytes)) { response in
            Answer(status: response.status, headers: response.headers, body: response.body)
        }
    }

    func attachmentStatus(_ sha256: String, space: String? = nil, as account: Account) async throws -> Answer {
        try await send(.get, "/v1/attachments/\(sha256)\(spaceQuery(space, first: true))", headers: account.bearer)
    }

    func attachmentContent(_ sha256: String, space: String? = nil, range: String? = nil, as account: Account) async throws -> Answer {
        var headers = account.bearer
        if let range { headers[.range] = range }
        return try await send(.get, "/v1/attachments/\(sha256)/content\(spaceQuery(space, first: true))", headers: headers)
    }

    /// Begins and sends `bytes` in chunks, requiring a 200 at each step; the last status.
    func uploaded(_ bytes: [UInt8], chunk: Int, space: String? = nil, as account: Account,
                  sourceLocation: SourceLocation = #_sourceLocation) async throws -> AttachmentStatusJSON {
        let sha256 = AttachmentFixture.sha256(bytes)
        let begun = try await beginAttachment(sha256, size: Int64(bytes.count), space: space, as: account)
        try #require(begun.status == .ok, "begin: \(begun.text)", sourceLocation: sourceLocation)
        var status = try begun.decode(AttachmentStatusJSON.self, sourceLocation: sourceLocation)
        while !status.complete {
            let end = min(bytes.count, Int(status.received) + chunk)
            let sent = try await appendAttachment(sha256, offset: status.received, bytes[Int(status.received)..<end], space: space, as: account)
            try #require(sent.status == .ok, "append: \(sent.text)", sourceLocation: sourceLocation)
            status = try sent.decode(AttachmentStatusJSON.self, sourceLocation: sourceLocation)
        }
        return status
    }

    private func spaceQuery(_ space: String?, first: Bool) -> String {
        guard let space else { return "" }
        let encoded = space.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? space
        return (first ? "?" : "&") + "space=\(encoded)"
    }
}

extension Answer {
    /// The error body of an attachment call, checked to be JSON with the documented shape.
    func attachmentError(sourceLocation: SourceLocation = #_sourceLocation) throws -> AttachmentErrorJSON {
        #expect(headers[.contentType]?.hasPrefix("application/json") == true, "\(headers)", sourceLocation: sourceLocation)
        let error = try decode(AttachmentErrorJSON.self, sourceLocation: sourceLocation)
        #expect(error.statusCode == Int(status.code), sourceLocation: sourceLocation)
        #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
        return error
    }
}
