import Foundation
import HTTPTypes
import Testing
@testable import EventualServer

@Suite("Attachments over HTTP: a real server on a loopback port", .timeLimit(.minutes(4)))
struct AttachmentsHTTPTests {
    @Test(arguments: Backend.available)
    func aPhotoSentInChunksDownloadsWithItsTypeAndLengthWholeOrFromAByte(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api in
            // Given a PNG of 300,000 bytes sent in 128 KiB chunks
            let alice = try await api.signUp("alice")
            var bytes = AttachmentFixture.jpeg(300_000, seed: 11)
            bytes.replaceSubrange(0..<8, with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            let sha256 = AttachmentFixture.sha256(bytes)
            let status = try await api.uploaded(bytes, chunk: 131_072, as: alice)
            #expect(status == AttachmentStatusJSON(sha256: sha256, space: alice.id, size: 300_000, received: 300_000, complete: true,
                                                   contentType: "image/png"))
            // When it is downloaded whole
            let whole = try await api.attachmentContent(sha256, as: alice)
            // Then with its type and length, byte for byte
            #expect(whole.status == .ok)
            #expect(whole.headers[.contentType] == "image/png")
            #expect(whole.headers[.contentLength] == "300000")
            #expect(Array(whole.body.readableBytesView) == bytes)
            // And from a byte on, as a resumed download asks
            let rest = try await api.attachmentContent(sha256, range: "bytes=200000-", as: alice)
            #expect(rest.status == .partialContent)
            #expect(rest.headers[.contentRange] == "bytes 200000-299999/300000")
            #expect(rest.headers[.contentLength] == "100000")
            #expect(Array(rest.body.readableBytesView) == Array(bytes[200_000...]))
            let past = try await api.attachmentContent(sha256, range: "bytes=300000-", as: alice)
            #expect(past.status == .rangeNotSatisfiable)
            _ = try past.attachmentError()
            // And the status says it is complete; a begin again needs nothing sent
            #expect(try await api.attachmentStatus(sha256, as: alice).decode(AttachmentStatusJSON.self) == status)
            #expect(try await api.beginAttachment(sha256, size: 300_000, as: alice).decode(AttachmentStatusJSON.self).complete)
        }
    }

    @Test(arguments: Backend.available)
    func everyBadInputIsA4xxWithAJSONMessage(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live, configure: { $0.maxAttachmentChunkBytes = 64 * 1024 }) { api in
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob"), carol = try await api.signUp("carol")
            let home = try await api.createdSpace("Home", as: alice)
            try await api.join(carol, to: home.id, role: "viewer", by: alice)
            let bytes = AttachmentFixture.jpeg(100_000, seed: 12)
            let sha256 = AttachmentFixture.sha256(bytes)

            // A digest that is not 64 lowercase hex digits
            for bad in [sha256.uppercased(), String(sha256.dropLast()), sha256 + "0", "sha256:" + sha256] {
                let answer = try await api.beginAttachment(bad, size: 10, as: alice)
                #expect(answer.status == .badRequest, "\(bad): \(answer.text)")
                #expect(try answer.attachmentError().message.contains("64 lowercase hex"))
            }
            #expect(try await api.attachmentContent(sha256.uppercased(), as: alice).status == .badRequest)
            // A size of nothing, or above the limit
            #expect(try await api.beginAttachment(sha256, size: 0, as: alice).status == .badRequest)
            // NB: past the contract's 20 MiB it is the contract's 400 that answers, before the handler
            let huge = try await api.beginAttachment(sha256, size: 20 * 1_048_576 + 1, as: alice)
            #expect(huge.status == .badRequest)
            #expect(try huge.attachmentError().message.contains("size must be at most 20971520"))
            // No token
            #expect(try await api.send(.get, "/v1/attachments/\(sha256)").status == .unauthorized)

            // A chunk of an upload never begun; the download of a blob never uploaded
            let notBegun = try await api.appendAttachment(sha256, offset: 0, bytes[0..<100], as: alice)
            #expect(notBegun.status == .notFound)
            #expect(try notBegun.attachmentError().code == "not_begun")
            let unknown = try await api.attachmentContent(sha256, as: alice)
            #expect(unknown.status == .notFound)
            #expect(try unknown.attachmentError().code == "not_uploaded")
            #expect(try unknown.attachmentError().message == "not uploaded yet")

            // Begun, half sent: a chunk at another offset is told where the server stands
            #expect(try await api.beginAttachment(sha256, size: 100_000, as: alice).status == .ok)
            #expect(try await api.appendAttachment(sha256, offset: 0, bytes[0..<50_000], as: alice).status == .ok)
            let behind = try await api.appendAttachment(sha256, offset: 0, bytes[0..<50_000], as: alice)
            #expect(behind.status == .conflict)
            let conflict = try behind.attachmentError()
            #expect(conflict.code == "offset_mismatch" && conflict.received == 50_000)
            // Still not downloadable, and at once
            let incomplete = try await api.attachmentContent(sha256, as: alice)
            #expect(incomplete.status == .notFound)
            #expect(try incomplete.attachmentError().message == "not uploaded yet")
            // A chunk past the declared size, an empty one, one over the chunk limit, one without its offset, one sent as JSON
            #expect(try await api.appendAttachment(sha256, offset: 50_000, bytes[0..<60_000], as: alice).status == .badRequest)
            #expect(try await api.appendAttachment(sha256, offset: 50_000, [], as: alice).status == .badRequest)
            let overChunk = try await api.appendAttachment(sha256, offset: 50_000, [UInt8](repeating: 1, count: 64 * 1024 + 1), as: alice)
            #expect(overChunk.status == .contentTooLarge)
            _ = try overChunk.attachmentError()
            var octets = alice.bearer
            octets[.contentType] = "application/octet-stream"
            let noOffset = try await api.client.execute(uri: "/v1/attachments/\(sha256)", method: .patch, headers: octets,
                                                        body: .init(bytes: bytes[50_000...])) { $0.status }
            #expect(noOffset == .badRequest)
            let asJSON = try await api.appendAttachment(sha256, offset: 50_000, Array("{}".utf8), contentType: "application/json", as: alice)
            #expect((400..<500).contains(asJSON.status.code), "\(asJSON.text)")
            _ = try asJSON.attachmentError()

            // Someone else's space is a 404, as the space calls answer; a viewer may not upload
            let stranger = try await api.beginAttachment(sha256, size: 100_000, space: home.id, as: bob)
            #expect(stranger.status == .notFound)
            _ = try stranger.attachmentError()
            #expect(try await api.attachmentStatus(sha256, space: alice.id, as: bob).status == .notFound)
            let viewer = try await api.beginAttachment(sha256, size: 100_000, space: home.id, as: carol)
            #expect(viewer.status == .forbidden)
            #expect(try viewer.attachmentError().message.contains("viewer"))

            // Bytes that are no photo, and bytes that are not those of their digest
            let pdf = Array("%PDF-1.7".utf8) + [UInt8](repeating: 0, count: 1000)
            let pdfDigest = AttachmentFixture.sha256(pdf)
            #expect(try await api.beginAttachment(pdfDigest, size: Int64(pdf.count), as: alice).status == .ok)
            let unsupported = try await api.appendAttachment(pdfDigest, offset: 0, pdf, as: alice)
            #expect(unsupported.status == .unsupportedMediaType)
            #expect(try unsupported.attachmentError().code == "unsupported_type")
            let other = AttachmentFixture.jpeg(1000, seed: 13)
            #expect(try await api.beginAttachment(pdfDigest, size: 1000, as: alice).status == .ok)
            let mismatch = try await api.appendAttachment(pdfDigest, offset: 0, other, as: alice)
            #expect(mismatch.status == .unprocessableContent)
            let mismatchError = try mismatch.attachmentError()
            #expect(mismatchError.code == "hash_mismatch" && mismatchError.message.contains("SHA-256"))
            #expect(try await api.attachmentStatus(pdfDigest, as: alice).status == .notFound)
        }
    }

    @Test(arguments: Backend.available)
    func aSharedSpacesMembersFindItsBlobCompleteAndAViewerDownloadsIt(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api in
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob"), carol = try await api.signUp("carol")
            let home = try await api.createdSpace("Home", as: alice)
            try await api.join(bob, to: home.id, by: alice)
            try await api.join(carol, to: home.id, role: "viewer", by: alice)
            let bytes = AttachmentFixture.jpeg(70_000, seed: 14)
            let sha256 = AttachmentFixture.sha256(bytes)
            _ = try await api.uploaded(bytes, chunk: 65_536, space: home.id, as: bob)
            let again = try await api.beginAttachment(sha256, size: 70_000, space: home.id, as: alice)
            #expect(try again.decode(AttachmentStatusJSON.self).complete)
            let downloaded = try await api.attachmentContent(sha256, space: home.id, as: carol)
            #expect(downloaded.status == .ok)
            #expect(downloaded.headers[.contentType] == "image/jpeg")
            #expect(Array(downloaded.body.readableBytesView) == bytes)
        }
    }
}
