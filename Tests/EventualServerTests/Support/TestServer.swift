@_exported import EventualTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
@testable import EventualServer

extension Backend: CustomTestStringConvertible {
    public var testDescription: String { rawValue }
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
