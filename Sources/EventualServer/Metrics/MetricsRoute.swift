import Crypto
import Foundation
import Hummingbird

/// `GET /metrics`: the Prometheus text, for a scraper that sends `Authorization: Bearer <token>`.
struct MetricsRoute {
    let metrics: ServerMetrics
    let token: String

    func register(on router: Router<ServerRequestContext>) {
        let metrics = self.metrics
        let expected = Data(SHA256.hash(data: Data(token.utf8)))
        router.get("metrics") { request, _ -> Response in
            let sent = request.headers[.authorization].flatMap { header -> String? in
                let parts = header.split(separator: " ", maxSplits: 1)
                return parts.count == 2 && parts[0].lowercased() == "bearer" ? String(parts[1]) : nil
            }
            // NB: comparing digests of equal length keeps the comparison's time independent of the token.
            guard let sent, Self.constantTimeEqual(Data(SHA256.hash(data: Data(sent.utf8))), expected) else {
                throw APIError.unauthorized("GET /metrics needs 'Authorization: Bearer <metrics token>'")
            }
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
    }

    private static func constantTimeEqual(_ a: Data, _ b: Data) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
