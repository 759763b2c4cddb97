import EventualServer
import Foundation
import Logging
import PostgresKit

/// The databases every server test runs on: SQLite always, PostgreSQL when `DATABASE_URL` is set.
public enum Backend: String, CaseIterable, Sendable {
    case sqlite
    case postgres

    public static var available: [Backend] {
        ProcessInfo.processInfo.environment["DATABASE_URL"] == nil ? [.sqlite] : [.sqlite, .postgres]
    }
}

/// A fresh, empty database of one backend, removed when the test ends.
public struct ScratchDatabase: Sendable {
    public let location: DatabaseLocation
    private let cleanup: @Sendable () async throws -> Void

    public static func make(_ backend: Backend) async throws -> ScratchDatabase {
        switch backend {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-tests-\(UUID().uuidString)")
            return ScratchDatabase(location: .sqlite(path: folder.appendingPathComponent("test.sqlite").path)) {
                try? FileManager.default.removeItem(at: folder)
            }
        case .postgres:
            guard let url = ProcessInfo.processInfo.environment["DATABASE_URL"] else { throw TestFailure("DATABASE_URL is not set") }
            let name = "eventual_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16))"
            try await PostgresAdmin(url: url).execute("CREATE DATABASE \(name)")
            guard var components = URLComponents(string: url) else { throw TestFailure("DATABASE_URL is not a URL") }
            components.path = "/\(name)"
            return ScratchDatabase(location: .postgres(url: components.string!)) {
                try await PostgresAdmin(url: url).execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            }
        }
    }

    /// Removes the database. NB: a failure is reported on stderr, not thrown: it says nothing
    /// about the behaviour under test, and a leftover scratch database harms no later test.
    public func remove() async {
        do {
            try await cleanup()
        } catch {
            FileHandle.standardError.write(Data("could not remove a scratch database: \(error)\n".utf8))
        }
    }
}

/// Runs administrative statements (CREATE/DROP DATABASE) on the server `DATABASE_URL` names.
struct PostgresAdmin {
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

