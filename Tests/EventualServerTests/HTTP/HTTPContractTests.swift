import Foundation
import Testing
@testable import EventualServer

@Suite("HTTP edge: errors are JSON 4xx, never 500", .timeLimit(.minutes(2)))
struct HTTPContractTests {
    @Test(arguments: Backend.available)
    func healthAndContractAreServed(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let health = try await api.send(.get, "/health")
            #expect(health.status == .ok)
            #expect(health.text.contains("ok"))
            #expect(health.headers[.init("X-Request-Id")!] != nil)
            let contract = try await api.send(.get, "/openapi.yaml")
            #expect(contract.status == .ok)
            #expect(contract.text.hasPrefix("openapi:"))
            #expect(contract.text.contains("/products/{id}"))
        }
    }

    @Test(arguments: Backend.available)
    func unknownRouteIsAJSON404(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let answer = try await api.send(.get, "/no/such/route")
            #expect(answer.status == .notFound)
            #expect(try answer.error().error == "Not Found")
        }
    }

    @Test(arguments: Backend.available)
    func malformedOrMistypedJSONIsA400NamingTheProblem(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let cases: [(json: String, mentions: String)] = [
                (#"{"username": "x""#, "JSON"),
                ("[]", "body"),
                (#"{"username": 42, "email": "a@example.com", "password": "long enough"}"#, "username"),
                (#"{"email": "a@example.com", "password": "long enough"}"#, "username"),
                (#"{"username": null, "email": "a@example.com", "password": "long enough"}"#, "username"),
            ]
            for bad in cases {
                let answer = try await api.send(.post, "/users", json: bad.json)
                #expect(answer.status == .badRequest, "\(bad.json): \(answer.text)")
                #expect(try answer.error().message.contains(bad.mentions), "\(bad.json): \(answer.text)")
            }
        }
    }

    @Test(arguments: Backend.available)
    func missingOrWrongContentTypeIsA4xx(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let noBody = try await api.send(.post, "/users")
            let plainText = try await api.client.execute(
                uri: "/users", method: .post, headers: [.contentType: "text/plain"], body: .init(string: "hello")
            ) { Answer(status: $0.status, headers: $0.headers, body: $0.body) }
            for answer in [noBody, plainText] {
                #expect((400..<500).contains(answer.status.code), "\(answer.status): \(answer.text)")
                _ = try answer.error()
            }
        }
    }

    @Test(arguments: Backend.available)
    func bodyOverOneMebibyteIsRefused(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let image = String(repeating: "A", count: 1024 * 1024)
            let answer = try await api.send(.post, "/products", headers: account.bearer,
                                            json: #"{"token":"t","name":"n","barcode":"96385074","test":false,"img":"\#(image)"}"#)
            #expect(answer.status == .contentTooLarge)
            _ = try answer.error()
        }
    }

    @Test(arguments: Backend.available)
    func anImageJustUnderTheLimitIsStored(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let barcode = Barcodes.unique()
            let token = try await api.sessionToken(barcode, as: account)
            let image = String(repeating: "A", count: 1000 * 1000)
            let answer = try await api.send(.post, "/products", headers: account.bearer,
                                            json: #"{"token":"\#(token)","name":"n","barcode":"\#(barcode)","test":false,"img":"\#(image)"}"#)
            #expect(answer.status == .created)
            #expect(try await api.products(barcode, as: account).first?.img?.count == image.count)
        }
    }

    @Test(arguments: Backend.available)
    func badIdempotencyKeyIsA400(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let answer = try await api.register(username: "keyed", email: "keyed@example.com",
                                                key: String(repeating: "k", count: 256))
            #expect(answer.status == .badRequest)
            #expect(try answer.error().message.contains("Idempotency-Key"))
        }
    }
}
