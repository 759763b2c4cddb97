import EventualAPI
import Foundation
import Testing
@testable import EventualServer

/// The property: every request the HTTP parser refuses is answered at once with the JSON error of
/// its kind (400, 414 or 431), and its connection closed, whatever the bytes; never left open
/// without a status, and the server serves the next client as before.
///
/// NB: the server's idle timeout is a minute here, so that a connection closed by it cannot pass
/// for one closed by the refusal; each answer must come within 10 s (it takes milliseconds; the
/// bound leaves room for a loaded CI machine, and tells "at once" from "never" and from the timeout).
@Suite("Requests the HTTP parser refuses: answered at once, connection closed", .timeLimit(.minutes(3)))
struct UnreadableRequestTests {
    /// What a refused request got: the answer, and whether the server then closed the connection.
    struct Refusal {
        let answer: String
        let closed: Bool
        let took: Duration

        func expect(_ status: Int, _ comment: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(comment): \(answer.prefix(200))", sourceLocation: sourceLocation)
            #expect(answer.contains(#""statusCode":\#(status)"#), "\(comment): \(answer.prefix(400))", sourceLocation: sourceLocation)
            #expect(answer.lowercased().contains("connection: close"), "\(comment)", sourceLocation: sourceLocation)
            #expect(closed, "\(comment): the connection stayed open", sourceLocation: sourceLocation)
            #expect(took < .seconds(10), "\(comment): answered after \(took)", sourceLocation: sourceLocation)
        }
    }

    /// Sends `bytes` on a new connection (reading the answer meanwhile: the server may answer and
    /// stop reading before the last byte is sent), then reads until the server closes.
    static func send(_ bytes: Data, port: Int) async throws -> Refusal {
        let connection = try RawConnection(port: port, timeout: .seconds(20))
        let started = ContinuousClock.now
        let reading = Task { await offCooperativePool { connection.readToEnd() } }
        do { try connection.send(bytes) } catch {
            // the server answered and shut its side before reading everything: the answer is what counts
        }
        let answer = await reading.value
        let took = ContinuousClock.now - started
        // NB: `readToEnd` returns at the server's close, or after the 20 s read timeout with the
        // connection still open: the elapsed time tells which.
        return Refusal(answer: answer, closed: took < .seconds(19), took: took)
    }

    static func send(_ text: String, port: Int) async throws -> Refusal { try await send(Data(text.utf8), port: port) }

    @Test func everyHeaderOfTheContractWithEachControlByteIsA400() async throws {
        let contract = try ContractLimits.served()
        let headers = Set(contract.operations.values.flatMap(\.parameters).filter { $0.location == .header }.map(\.name))
            .union(["Authorization", "Content-Type"]).sorted()
        #expect(headers.contains("Idempotency-Key"))
        // NB: a tab is allowed inside a header's value (RFC 9110 §5.5); every other control byte is not.
        let bytes = (UInt8(0)...UInt8(0x1f)).filter { $0 != 0x09 } + [0x7f]
        try await withServer(.sqlite, mode: .live, configure: { $0.idleTimeout = .seconds(60) }) { api in
            let port = try #require(api.client.port)
            for header in headers {
                for byte in bytes {
                    var request = Data("POST /v1/spending/last-seen HTTP/1.1\r\nHost: 127.0.0.1\r\n\(header): a".utf8)
                    request.append(byte)
                    request.append(contentsOf: Array("b\r\nContent-Length: 2\r\n\r\n{}".utf8))
                    let refusal = try await Self.send(request, port: port)
                    refusal.expect(400, "\(header) with 0x\(String(byte, radix: 16))")
                }
            }
            #expect(try await api.send(.get, "/health").status == .ok)
        }
    }

    @Test func aRequestLineOfOneHundredKilobytesOrOneMegabyteIsA414() async throws {
        try await withServer(.sqlite, mode: .live, configure: { $0.idleTimeout = .seconds(60) }) { api in
            let port = try #require(api.client.port)
            for length in [100_000, 1_000_000] {
                let since = try await Self.send("GET /v1/sync/pull?since=\(String(repeating: "1", count: length)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port: port)
                since.expect(414, "since of \(length) characters")
            }
            let collections = Array(repeating: "collection=pantry_items", count: 5_000).joined(separator: "&")
            try await Self.send("GET /v1/sync/pull?\(collections) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port: port)
                .expect(414, "5,000 collection values")
            #expect(try await api.send(.get, "/health").status == .ok)
        }
    }

    @Test func aHeaderBlockPastTheLimitIsA431() async throws {
        try await withServer(.sqlite, mode: .live, configure: { $0.idleTimeout = .seconds(60) }) { api in
            let port = try #require(api.client.port)
            try await Self.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: \(String(repeating: "a", count: 200_000))\r\n\r\n", port: port)
                .expect(431, "a 200 KB header")
            let many = (0..<2_000).map { "X-H\($0): v\r\n" }.joined()
            try await Self.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\(many)\r\n", port: port).expect(431, "2,000 headers")
            #expect(try await api.send(.get, "/health").status == .ok)
        }
    }

    @Test func requestsThatAreNotHTTPOrDisagreeOnTheirLengthAreA400() async throws {
        try await withServer(.sqlite, mode: .live, configure: { $0.idleTimeout = .seconds(60) }) { api in
            let port = try #require(api.client.port)
            try await Self.send("HELLO THERE\r\n\r\n", port: port).expect(400, "not a request line")
            try await Self.send("GET /health SPDY/9\r\nHost: 127.0.0.1\r\n\r\n", port: port).expect(400, "not an HTTP version")
            try await Self.send("POST /v1/spaces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n{}", port: port)
                .expect(400, "a negative Content-Length")
            try await Self.send("POST /v1/spaces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", port: port)
                .expect(400, "two different Content-Lengths")
            try await Self.send("GET /health HTTP/1.1\r\n\r\n", port: port).expect(400, "HTTP/1.1 without Host")
            // And HTTP/1.0 needs no Host; the server still answers it
            let old = try await Self.send("GET /health HTTP/1.0\r\n\r\n", port: port)
            #expect(old.answer.hasPrefix("HTTP/1.0 200") || old.answer.hasPrefix("HTTP/1.1 200"), "\(old.answer.prefix(200))")
            #expect(try await api.send(.get, "/health").status == .ok)
        }
    }

    @Test func aSecondRequestOnAKeptConnectionThatIsRefusedIsAnsweredToo() async throws {
        try await withServer(.sqlite, mode: .live, configure: { $0.idleTimeout = .seconds(60) }) { api in
            let port = try #require(api.client.port)
            // Given a connection that asked for /health and was answered
            let connection = try RawConnection(port: port, timeout: .seconds(20))
            try connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let first = await offCooperativePool { connection.readAll() }
            #expect(first.hasPrefix("HTTP/1.1 200"), "\(first.prefix(200))")
            // When its next request has a control byte in a header
            let started = ContinuousClock.now
            try connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: a\u{01}b\r\n\r\n")
            let second = await offCooperativePool { connection.readToEnd() }
            // Then it is answered 400 and the connection closed
            #expect(second.hasPrefix("HTTP/1.1 400"), "\(second.prefix(300))")
            #expect(ContinuousClock.now - started < .seconds(10))
        }
    }
}
