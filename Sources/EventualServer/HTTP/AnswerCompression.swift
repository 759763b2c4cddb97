import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Answers sent gzip-compressed to a client that accepts it: the pull pages, the largest answers
/// a device waits for, and mostly the same field names and ids over again (a fifth of their size
/// or less). On a slow link that is most of a first sync's time.
///
/// NB: only the paths named: an answer's own bytes (a photo) are compressed already, and small
/// answers are not worth the CPU.
struct AnswerCompression: Sendable {
    /// The paths whose answers are compressed.
    let paths: Set<String>
    /// Answers smaller than this go as they are: the gzip frame and the CPU cost more than they save.
    var minimumBytes = 1024

    static let pullPages = AnswerCompression(paths: ["/v1/sync/pull"])

    /// The answer compressed, when the request accepts gzip and the answer is worth it; else as it was.
    func apply(to response: Response, for request: Request) async throws -> Response {
        guard paths.contains(request.uri.path), response.status == .ok, response.headers[.contentEncoding] == nil,
              Self.acceptsGzip(request.headers[values: .acceptEncoding]) else { return response }
        var response = response
        // NB: the page is in memory already (the generated server encodes it whole); collected
        // here to be compressed in one go, which compresses best.
        let collector = BodyCollector()
        try await response.body.write(collector)
        var plain = collector.buffer
        response.headers[.vary] = "Accept-Encoding"
        guard plain.readableBytes >= minimumBytes else {
            response.body = ResponseBody(byteBuffer: plain)
            return response
        }
        let compressed = try plain.compress(with: .gzip())
        response.headers[.contentEncoding] = "gzip"
        response.headers[.contentLength] = String(compressed.readableBytes)
        response.body = ResponseBody(byteBuffer: compressed)
        return response
    }

    /// Whether an `Accept-Encoding` list takes gzip: named (or `*`) without `q=0`.
    static func acceptsGzip(_ values: [String]) -> Bool {
        var gzip: Bool?, any: Bool?
        for item in values.flatMap({ $0.split(separator: ",") }) {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let coding = parts.first else { continue }
            let refused = parts.dropFirst().contains { $0.replacingOccurrences(of: " ", with: "").range(of: #"^q=0(\.0{0,3})?$"#, options: .regularExpression) != nil }
            if coding == "gzip" || coding == "x-gzip" { gzip = !refused } else if coding == "*" { any = !refused }
        }
        return gzip ?? any ?? false
    }
}

/// Gathers a body's bytes as they are written.
private final class BodyCollector: ResponseBodyWriter {
    var buffer = ByteBuffer()

    func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        self.buffer.writeBuffer(&buffer)
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
