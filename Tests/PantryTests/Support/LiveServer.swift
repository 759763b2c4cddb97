@_exported import EventualTestSupport
import EventualAPI
import EventualKit
import EventualServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import Pantry

/// The app on a device (a data directory), talking to `server`, with test-friendly settings.
func device(_ folder: URL, server: URL) -> PantryApp {
    var configuration = PantryConfiguration(dataDirectory: folder, serverURL: server)
    configuration.passwordRounds = 100_000
    // NB: generous deadlines: on a machine busy with the fault soak a request can take seconds;
    // the suites' time limits bound each test.
    configuration.requestTimeout = .seconds(30)
    configuration.timeouts = ServerLink.Timeouts(connect: .seconds(10), firstByte: .seconds(20))
    configuration.lookupPolicy = .networkFirst(timeout: .seconds(20))
    configuration.localCommandSyncBudget = .seconds(30)
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

/// A link to `server` signed in as `user`, for a test's own calls (seeding, probing), with the
/// same generous deadlines as `device`: a login under the whole suite's load took more than the
/// default 5 s.
private func signedInLink(server: URL, as user: TestUser, purpose: String) async throws -> ServerLink {
    let vault = SessionVault(secrets: FileSecretStore(directory: FileManager.default.temporaryDirectory
        .appendingPathComponent("\(purpose)-\(UUID().uuidString)")), rounds: 100_000)
    let link = ServerLink(serverURL: server, timeouts: .patient) {
        vault.accessToken
    }
    try await vault.signIn(email: user.email, password: user.password, client: link.client)
    return link
}

/// What the server's knowledge base says about a barcode, asked as `user`.
func serverProducts(_ barcode: String, server: URL, as user: TestUser) async throws -> [Components.Schemas.Product] {
    let link = try await signedInLink(server: server, as: user, purpose: "probe")
    guard case .ok(let answer) = try await link.client.getProducts(query: .init(barcode: barcode)) else {
        throw TestFailure("look-up of \(barcode) failed")
    }
    return try answer.body.json.products
}

/// Posts a product straight to the server, as another user would have.
func seedProduct(_ barcode: String, name: String, server: URL, as user: TestUser) async throws -> String {
    let link = try await signedInLink(server: server, as: user, purpose: "seed")
    guard case .ok(let list) = try await link.client.getProducts(query: .init(barcode: barcode)) else { throw TestFailure("look-up") }
    let token = try list.body.json.token
    guard case .created(let created) = try await link.client.postProduct(
        body: .json(.init(token: token, name: name, barcode: barcode, test: .case1(false)))) else { throw TestFailure("post") }
    return try created.body.json.id
}

/// Deletes a product straight on the server, as its creator.
func deleteProduct(_ id: String, server: URL, as user: TestUser) async throws {
    let link = try await signedInLink(server: server, as: user, purpose: "delete")
    guard case .ok = try await link.client.deleteProduct(path: .init(id: id)) else { throw TestFailure("delete \(id)") }
}
