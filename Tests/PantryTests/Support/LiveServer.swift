import EventualAPI
import EventualKit
import EventualServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import Pantry

/// A scratch folder removed at the end of a test.
struct ScratchFolder: Sendable {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("pantry-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func remove() { try? FileManager.default.removeItem(at: url) }
    func folder(_ name: String) -> URL { url.appendingPathComponent(name, isDirectory: true) }
}

/// A real server on a loopback port, on a fresh SQLite database in `scratch`.
func withLiveServer<T: Sendable>(_ body: @Sendable (_ server: URL, _ scratch: ScratchFolder) async throws -> T) async throws -> T {
    let scratch = try ScratchFolder()
    defer { scratch.remove() }
    let configuration = ServerConfiguration(
        hostname: "127.0.0.1", port: 0, database: .sqlite(path: scratch.url.appendingPathComponent("server.sqlite").path),
        logLevel: .critical, bcryptCost: 4
    )
    let app = try await buildApplication(configuration)
    return try await app.test(.live) { client in
        let port = try #require(client.port)
        return try await body(URL(string: "http://127.0.0.1:\(port)")!, scratch)
    }
}

/// A loopback address where nothing listens: the server as seen from a basement.
let unreachableServer: URL = {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    _ = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    close(fd)
    // NB: the port was free a moment ago and nothing listens on it now: connections are refused.
    return URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))")!
}()

/// The app on a device (a data directory), talking to `server`, with test-friendly settings.
func device(_ folder: URL, server: URL) -> PantryApp {
    var configuration = PantryConfiguration(dataDirectory: folder, serverURL: server)
    configuration.passwordRounds = 100_000
    configuration.requestTimeout = .seconds(3)
    configuration.lookupPolicy = .networkFirst(timeout: .seconds(3))
    configuration.probeTimeout = .milliseconds(500)
    return PantryApp(configuration: configuration)
}

/// A fresh account on the server.
struct TestUser: Sendable {
    let username: String
    let email: String
    let password: String

    static func register(on server: URL, name: String = "user") async throws -> TestUser {
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let user = TestUser(username: "\(name)_\(suffix)", email: "\(name).\(suffix)@example.com", password: "pass-\(suffix)")
        _ = try await device(FileManager.default.temporaryDirectory.appendingPathComponent("reg-\(suffix)"), server: server)
            .register(username: user.username, email: user.email, password: user.password)
        return user
    }
}

/// What the server's knowledge base says about a barcode, asked as `user`.
func serverProducts(_ barcode: String, server: URL, as user: TestUser) async throws -> [Components.Schemas.Product] {
    let vault = SessionVault(secrets: FileSecretStore(directory: FileManager.default.temporaryDirectory
        .appendingPathComponent("probe-\(UUID().uuidString)")), rounds: 100_000)
    let link = ServerLink(serverURL: server) { vault.accessToken }
    try await vault.signIn(email: user.email, password: user.password, client: link.client)
    guard case .ok(let answer) = try await link.client.getProducts(query: .init(barcode: barcode)) else {
        throw TestFailure("look-up of \(barcode) failed")
    }
    return try answer.body.json.products
}

/// Posts a product straight to the server, as another user would have.
func seedProduct(_ barcode: String, name: String, server: URL, as user: TestUser) async throws -> String {
    let vault = SessionVault(secrets: FileSecretStore(directory: FileManager.default.temporaryDirectory
        .appendingPathComponent("seed-\(UUID().uuidString)")), rounds: 100_000)
    let link = ServerLink(serverURL: server) { vault.accessToken }
    try await vault.signIn(email: user.email, password: user.password, client: link.client)
    guard case .ok(let list) = try await link.client.getProducts(query: .init(barcode: barcode)) else { throw TestFailure("look-up") }
    let token = try list.body.json.token
    guard case .created(let created) = try await link.client.postProduct(
        body: .json(.init(token: token, name: name, barcode: barcode, test: .case1(false)))) else { throw TestFailure("post") }
    return try created.body.json.id
}

/// Deletes a product straight on the server, as its creator.
func deleteProduct(_ id: String, server: URL, as user: TestUser) async throws {
    let vault = SessionVault(secrets: FileSecretStore(directory: FileManager.default.temporaryDirectory
        .appendingPathComponent("delete-\(UUID().uuidString)")), rounds: 100_000)
    let link = ServerLink(serverURL: server) { vault.accessToken }
    try await vault.signIn(email: user.email, password: user.password, client: link.client)
    guard case .ok = try await link.client.deleteProduct(path: .init(id: id)) else { throw TestFailure("delete \(id)") }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Barcodes with valid check digits.
enum Barcodes {
    static let pasta = "8001120000002"
    static let milk = "4006381333931"
    static let coffee = "5000112548167"
    static let beans = "0049000028911"
}
