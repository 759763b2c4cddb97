import CompressNIO
import EventualAPI
import Foundation
import HTTPTypes
import NIOCore
import Testing
@testable import EventualServer

/// Issue 45: pull pages go gzip-compressed to a client that accepts it, and unpack to exactly
/// the page sent plain; nothing else changes, and a client that does not accept gzip gets the
/// page as before.
@Suite("Pull pages compressed", .timeLimit(.minutes(2)))
struct AnswerCompressionTests {
    @Test(arguments: Backend.available)
    func aPullPageUnpacksToThePlainPageAtAFractionOfItsSize(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api in
            // Given a person with 200 items
            let account = try await api.signUp()
            let changes = (0..<200).map { index in
                SyncChangeJSON(recordId: "item-\(index)", hlc: Stamps.at(-5000 + Int64(index)),
                               fields: pantryItem(["name": .string("Item \(index) from the corner shop"), "category": "pantry"]))
            }
            _ = try await api.pushed(changes, as: account)
            var accepting = account.bearer
            accepting[.acceptEncoding] = "br;q=1, gzip;q=0.8"
            // When the same page is pulled plain and by a client that accepts gzip
            let plain = try await api.send(.get, "/v1/sync/pull", headers: account.bearer)
            let packed = try await api.send(.get, "/v1/sync/pull", headers: accepting)
            // Then the second is gzip, says it varies by what is accepted, and unpacks to the first
            #expect(plain.status == .ok && plain.headers[.contentEncoding] == nil)
            #expect(packed.status == .ok && packed.headers[.contentEncoding] == "gzip")
            #expect(packed.headers[.vary] == "Accept-Encoding")
            var body = packed.body
            let unpacked = try body.decompress(with: .gzip())
            #expect(try Self.json(unpacked) == Self.json(plain.body))
            // And it is a fraction of the plain page's size
            #expect(packed.body.readableBytes * 4 < plain.body.readableBytes, "\(packed.body.readableBytes) of \(plain.body.readableBytes) bytes")
            // And a client that refuses gzip, or pushes, gets its answer plain
            var refusing = account.bearer
            refusing[.acceptEncoding] = "gzip;q=0, identity"
            #expect(try await api.send(.get, "/v1/sync/pull", headers: refusing).headers[.contentEncoding] == nil)
        }
    }

    @Test func acceptEncodingIsReadAsRFC9110Says() {
        #expect(AnswerCompression.acceptsGzip(["gzip"]))
        #expect(AnswerCompression.acceptsGzip(["deflate, gzip"]))
        #expect(AnswerCompression.acceptsGzip(["GZIP;q=0.5"]))
        #expect(AnswerCompression.acceptsGzip(["*"]))
        #expect(AnswerCompression.acceptsGzip(["br", "x-gzip"]))
        #expect(!AnswerCompression.acceptsGzip([]))
        #expect(!AnswerCompression.acceptsGzip(["identity"]))
        #expect(!AnswerCompression.acceptsGzip(["gzip;q=0"]))
        #expect(!AnswerCompression.acceptsGzip(["gzip; q=0.000"]))
        #expect(!AnswerCompression.acceptsGzip(["*, gzip;q=0"]))
        #expect(!AnswerCompression.acceptsGzip(["*;q=0"]))
        #expect(AnswerCompression.acceptsGzip(["gzip;q=0.001"]))
    }

    /// The page as JSON values: the same page may list an object's keys in another order.
    private static func json(_ buffer: ByteBuffer) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: Data(buffer: buffer)) as? NSDictionary)
    }
}
