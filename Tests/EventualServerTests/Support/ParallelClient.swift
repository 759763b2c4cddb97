import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP client with many connections at once, for tests that need requests to arrive truly in
/// parallel (the live test client sends its requests one after another on one connection).
struct ParallelClient: Sendable {
    let port: Int
    private let session: URLSession

    init(port: Int, connections: Int = 256, timeout: TimeInterval = 50) {
        self.port = port
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = connections
        configuration.timeoutIntervalForRequest = timeout
        session = URLSession(configuration: configuration)
    }

    /// Sends one request and returns its status code and body.
    func send(_ method: String, _ path: String, headers: [String: String] = [:], json: String? = nil) async throws -> (status: Int, body: String) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(json.utf8)
        }
        let (data, response) = try await session.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    func login(email: String, password: String) async throws -> Int {
        try await send("POST", "/auth/login", json: #"{"email":"\#(email)","password":"\#(password)"}"#).status
    }
}
