import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The JSON answers, decoded loosely enough to see exactly what the server sent.
struct UserJSON: Decodable, Equatable {
    let id: String
    let username: String
    let email: String
    let createdAt: String
    let updatedAt: String
}

struct ProductJSON: Decodable, Equatable {
    let id: String
    let name: String
    let description: String?
    let barcode: String
    let userId: String
    let test: Bool
    let img: String?
    let score: Int?
    let createdAt: String
    let updatedAt: String
}

struct ProductListJSON: Decodable {
    let products: [ProductJSON]
    let token: String
}

struct VoteJSON: Decodable {
    let id: String
    let rating: Int
    let productId: String
    let userId: String
}

struct ErrorJSON: Decodable {
    let statusCode: Int
    let error: String
    let message: String
}

/// A signed-in test user.
struct Account: Sendable {
    let id: String
    let username: String
    let email: String
    let password: String
    let accessToken: String

    var bearer: HTTPFields { [.authorization: "Bearer \(accessToken)"] }
}

/// One answer: status, headers and body.
struct Answer: Sendable {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let body: ByteBuffer

    var text: String { String(buffer: body) }

    func decode<T: Decodable>(_ type: T.Type, sourceLocation: SourceLocation = #_sourceLocation) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer: body))
        } catch {
            Issue.record("cannot decode \(T.self) from \(text): \(error)", sourceLocation: sourceLocation)
            throw error
        }
    }

    /// The error body, checked to have the documented shape and to match `status`.
    func error(sourceLocation: SourceLocation = #_sourceLocation) throws -> ErrorJSON {
        let error = try decode(ErrorJSON.self, sourceLocation: sourceLocation)
        #expect(error.statusCode == Int(status.code), sourceLocation: sourceLocation)
        #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
        return error
    }
}

/// Calls the API the way a client would, through whichever test client the server runs under.
struct API: Sendable {
    let client: any TestClientProtocol

    func send(_ method: HTTPRequest.Method, _ uri: String, headers: HTTPFields = [:], json: String? = nil) async throws -> Answer {
        var headers = headers
        var body: ByteBuffer?
        if let json {
            headers[.contentType] = "application/json"
            body = ByteBuffer(string: json)
        }
        return try await client.execute(uri: uri, method: method, headers: headers, body: body) { response in
            Answer(status: response.status, headers: response.headers, body: response.body)
        }
    }

    func register(username: String, email: String, password: String = "correct horse", key: String? = nil) async throws -> Answer {
        var headers: HTTPFields = [:]
        if let key { headers[.init("Idempotency-Key")!] = key }
        return try await send(.post, "/users", headers: headers,
                              json: #"{"username":"\#(username)","email":"\#(email)","password":"\#(password)"}"#)
    }

    func login(email: String, password: String) async throws -> Answer {
        try await send(.post, "/auth/login", json: #"{"email":"\#(email)","password":"\#(password)"}"#)
    }

    /// Registers and logs in a new user with unique names.
    func signUp(_ name: String = "user") async throws -> Account {
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let username = "\(name)_\(suffix)", email = "\(name).\(suffix)@example.com", password = "pass-\(suffix)"
        let registered = try await register(username: username, email: email, password: password)
        try #require(registered.status == .created, "register: \(registered.text)")
        let user = try registered.decode(UserJSON.self)
        let login = try await login(email: email, password: password)
        try #require(login.status == .created)
        struct Token: Decodable { let accessToken: String }
        return Account(id: user.id, username: username, email: email, password: password,
                       accessToken: try login.decode(Token.self).accessToken)
    }

    func lookup(_ barcode: String, as account: Account) async throws -> Answer {
        try await send(.get, "/products?barcode=\(barcode)", headers: account.bearer)
    }

    /// Looks a barcode up and returns its session token.
    func sessionToken(_ barcode: String, as account: Account) async throws -> String {
        let answer = try await lookup(barcode, as: account)
        try #require(answer.status == .ok, "lookup: \(answer.text)")
        return try answer.decode(ProductListJSON.self).token
    }

    /// The products the knowledge base holds for a barcode, best first.
    func products(_ barcode: String, as account: Account) async throws -> [ProductJSON] {
        let answer = try await lookup(barcode, as: account)
        try #require(answer.status == .ok, "lookup: \(answer.text)")
        return try answer.decode(ProductListJSON.self).products
    }

    func postProduct(
        _ barcode: String, name: String, token: String, as account: Account,
        test: String = "false", description: String? = nil, key: String? = nil
    ) async throws -> Answer {
        var headers = account.bearer
        if let key { headers[.init("Idempotency-Key")!] = key }
        let descriptionField = description.map { #","description":\#(jsonString($0))"# } ?? ""
        return try await send(.post, "/products", headers: headers,
                              json: #"{"token":"\#(token)","name":\#(jsonString(name)),"barcode":"\#(barcode)","test":\#(test)\#(descriptionField)}"#)
    }

    /// Looks the barcode up and posts a product for it; returns the stored product.
    func createProduct(_ barcode: String, name: String, as account: Account) async throws -> ProductJSON {
        let token = try await sessionToken(barcode, as: account)
        let answer = try await postProduct(barcode, name: name, token: token, as: account)
        try #require(answer.status == .created, "post product: \(answer.text)")
        return try answer.decode(ProductJSON.self)
    }

    func vote(_ productID: String, rating: String, token: String, as account: Account) async throws -> Answer {
        try await send(.post, "/votes", headers: account.bearer,
                       json: #"{"token":"\#(token)","rating":\#(rating),"productId":"\#(productID)"}"#)
    }
}

func jsonString(_ text: String) -> String {
    String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
}

/// Real barcodes (Open Food Facts) and barcodes made valid for a test.
enum Barcodes {
    static let upcA = "049000028911"
    static let upcAAsEAN13 = "0049000028911"
    static let ean8 = "96385074"

    /// A random EAN-13 with a correct check digit, so tests never share a barcode.
    static func unique() -> String {
        let data = [2] + (0..<11).map { _ in Int.random(in: 0...9) }
        var sum = 0
        for (offset, digit) in data.reversed().enumerated() { sum += digit * (offset % 2 == 0 ? 3 : 1) }
        return data.map(String.init).joined() + String((10 - sum % 10) % 10)
    }

    /// `barcode` with its last digit changed, so the check digit is wrong.
    static func withWrongCheckDigit(_ barcode: String) -> String {
        let last = Int(String(barcode.last!))!
        return barcode.dropLast() + String((last + 1) % 10)
    }
}
