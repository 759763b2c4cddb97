import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresKit
import Testing
@testable import EventualServer

/// The databases every server test runs on: SQLite always, PostgreSQL when `DATABASE_URL` is set.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    static var available: [Backend] {
        ProcessInfo.processInfo.environment["DATABASE_URL"] == nil ? [.sqlite] : [.sqlite, .postgres]
    }

    var testDescription: String { rawValue }
}

/// A fresh, empty database of one backend, removed when the test ends.
struct ScratchDatabase: Sendable {
    let location: DatabaseLocation
    private let cleanup: @Sendable () async throws -> Void

    static func make(_ backend: Backend) async throws -> ScratchDatabase {
        switch backend {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-tests-\(UUID().uuidString)")
            return ScratchDatabase(location: .sqlite(path: folder.appendingPathComponent("test.sqlite").path)) {
                try? FileManager.default.removeItem(at: folder)
            }
        case .postgres:
            let url = try #require(ProcessInfo.processInfo.environment["DATABASE_URL"])
            let name = "eventual_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16))"
            try await PostgresAdmin(url: url).execute("CREATE DATABASE \(name)")
            var components = try #require(URLComponents(string: url))
            components.path = "/\(name)"
            return ScratchDatabase(location: .postgres(url: try #require(components.string))) {
                try await PostgresAdmin(url: url).execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            }
        }
    }

    func remove() async {
        do { try await cleanup() } catch { Issue.record("could not remove a scratch database: \(error)") }
    }
}

/// Runs administrative statements (CREATE/DROP DATABASE) on the server `DATABASE_URL` names.
private struct PostgresAdmin {
    let url: String

    func execute(_ statement: String) async throws {
        let configuration = try SQLPostgresConfiguration(url: url).coreConfiguration
        let connection = try await PostgresConnection.connect(
            configuration: configuration, id: 1, logger: Logger(label: "test-admin")
        )
        do {
            _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: Logger(label: "test-admin"))
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
    }
}

/// The configuration tests use: a cheap bcrypt cost, quiet logs, a port picked by the system, and
/// room for the many accounts a test creates from one address.
func testConfiguration(_ location: DatabaseLocation) -> ServerConfiguration {
    var configuration = ServerConfiguration(hostname: "127.0.0.1", port: 0, database: location, logLevel: .warning, bcryptCost: 4)
    configuration.throttle.registrationsPerAddress.limit = 100_000
    return configuration
}

/// Builds a server on a fresh database of `backend` (its test configuration adjusted by `configure`)
/// and runs `test` against it through the real router.
func withServer<Value: Sendable>(
    _ backend: Backend,
    mode: TestingSetup = .router,
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ test: @Sendable (API) async throws -> Value
) async throws -> Value {
    try await withServer(backend, mode: mode, configure: configure) { api, _ in try await test(api) }
}

/// Like `withServer`, also handing the test where the server's database is.
func withServer<Value: Sendable>(
    _ backend: Backend,
    mode: TestingSetup = .router,
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ test: @Sendable (API, DatabaseLocation) async throws -> Value
) async throws -> Value {
    let scratch = try await ScratchDatabase.make(backend)
    do {
        var configuration = testConfiguration(scratch.location)
        configure(&configuration)
        let app = try await buildApplication(configuration)
        let value = try await app.test(mode) { client in try await test(API(client: client), scratch.location) }
        await scratch.remove()
        return value
    } catch {
        await scratch.remove()
        throw error
    }
}
