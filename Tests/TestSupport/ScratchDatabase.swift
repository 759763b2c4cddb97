import EventualServer
import EventualStorage
import Foundation
import Logging
import PostgresKit
import Synchronization

/// The databases every server test runs on: SQLite always, PostgreSQL when `DATABASE_URL` is set.
public enum Backend: String, CaseIterable, Sendable {
    case sqlite
    case postgres

    public static var available: [Backend] {
        ProcessInfo.processInfo.environment["DATABASE_URL"] == nil ? [.sqlite] : [.sqlite, .postgres]
    }
}

/// A fresh database of one backend, removed when the test ends.
///
/// A PostgreSQL one is a copy of a template that was migrated once for the current migrations
/// (`MigratedTemplate`), unless the test asks for one with no tables: about two hundred tests
/// that each migrated their own database at once, on two cores, kept PostgreSQL busy with
/// catalogue work for minutes and ran past their time limits. An SQLite one is always an empty
/// file: its migrations are local and quick, and every test that opens it migrates it.
public struct ScratchDatabase: Sendable {
    public let location: DatabaseLocation
    private let cleanup: @Sendable () async throws -> Void

    /// - Parameter emptyOfTables: on PostgreSQL, a database with no tables at all, for the tests
    ///   of the migrations themselves (on SQLite every scratch database is empty).
    public static func make(_ backend: Backend, emptyOfTables: Bool = false) async throws -> ScratchDatabase {
        switch backend {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-tests-\(UUID().uuidString)")
            return ScratchDatabase(location: .sqlite(path: folder.appendingPathComponent("test.sqlite").path)) {
                try? FileManager.default.removeItem(at: folder)
            }
        case .postgres:
            guard let url = ProcessInfo.processInfo.environment["DATABASE_URL"] else { throw TestFailure("DATABASE_URL is not set") }
            let name = "eventual_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16))"
            let admin = PostgresAdmin(url: url)
            if emptyOfTables {
                try await admin.execute("CREATE DATABASE \(name)")
            } else {
                let template = try await MigratedTemplate.shared.name(on: admin)
                try await admin.createDatabase(name, copying: template)
            }
            return ScratchDatabase(location: .postgres(url: try admin.url(ofDatabase: name))) {
                try await admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            }
        }
    }

    /// Removes the database. NB: a failure is reported on stderr, not thrown: it says nothing
    /// about the behaviour under test, and a leftover scratch database harms no later test.
    public func remove() async {
        do {
            try await cleanup()
        } catch {
            FileHandle.standardError.write(Data("could not remove a scratch database: \(String(reflecting: error))\n".utf8))
        }
    }
}

/// The PostgreSQL database that scratch databases copy: migrated once, then never connected to
/// again (`ALLOW_CONNECTIONS false`, which `CREATE DATABASE ... TEMPLATE` needs). Its name
/// carries a fingerprint of the migrations, so a later run with the same migrations reuses it and
/// a run with a new migration builds its own (and drops the older templates).
actor MigratedTemplate {
    static let shared = MigratedTemplate()
    private var building: Task<String, any Error>?

    func name(on admin: PostgresAdmin) async throws -> String {
        if let building { return try await building.value }
        let task = Task { try await Self.build(on: admin) }
        building = task
        do {
            return try await task.value
        } catch {
            building = nil  // NB: the next test tries again rather than inheriting one failure
            throw error
        }
    }

    static var currentName: String {
        // NB: FNV-1a over every statement, not Swift's hashValue, which changes per process.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for migration in Migration.all {
            for byte in "\(migration.version)\u{0}\(migration.statements.joined(separator: "\u{0}"))\u{1}".utf8 {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
            }
        }
        return "eventual_template_" + String(hash, radix: 16)
    }

    private static func build(on admin: PostgresAdmin) async throws -> String {
        let name = currentName
        // NB: two test processes on one server (CI and a developer's run) must not build it twice.
        return try await admin.withSessionLock(7_340_002) { run, rows in
            if try await rows("SELECT 1 FROM pg_database WHERE datname = '\(name)'") > 0 { return name }
            for older in try await admin.databaseNames(like: "eventual_template_%") where older != name {
                try await run("DROP DATABASE IF EXISTS \(older) WITH (FORCE)")
            }
            let building = "\(name)_building"
            try await run("CREATE DATABASE \(building)")
            var options = Database.Options()
            options.postgresPoolSize = 1
            let database = try await Database.open(.postgres(url: try admin.url(ofDatabase: building)), logger: Logger(label: "test-template"),
                                                   options: options)
            await database.close()
            try await admin.retryingWhileInUse { try await run("ALTER DATABASE \(building) RENAME TO \(name)") }
            try await run("ALTER DATABASE \(name) WITH ALLOW_CONNECTIONS false")
            return name
        }
    }
}

/// Runs administrative statements (CREATE/DROP DATABASE) on the server `DATABASE_URL` names, each
/// on a connection of its own and within `deadline`: PostgreSQL's driver does not give up a query
/// when its task is cancelled, so a test past its time limit would otherwise wait for ever.
struct PostgresAdmin: Sendable {
    let url: String
    var deadline: Duration = .seconds(90)

    func url(ofDatabase name: String) throws -> String {
        guard var components = URLComponents(string: url) else { throw TestFailure("DATABASE_URL is not a URL") }
        components.path = "/\(name)"
        guard let named = components.string else { throw TestFailure("DATABASE_URL is not a URL") }
        return named
    }

    func execute(_ statement: String) async throws {
        try await withConnection { connection in
            _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: Self.logger)
        }
    }

    func createDatabase(_ name: String, copying template: String) async throws {
        try await retryingWhileInUse { try await execute("CREATE DATABASE \(name) TEMPLATE \(template)") }
    }

    func databaseNames(like pattern: String) async throws -> [String] {
        try await withConnection { connection in
            var names: [String] = []
            let rows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT datname FROM pg_database WHERE datname LIKE '\(pattern)'"), logger: Self.logger)
            for try await (name) in rows.decode(String.self) { names.append(name) }
            return names
        }
    }

    /// Runs `body` holding a session-level advisory lock on one connection; `body` runs statements
    /// (`run`) and counts rows (`rows`) on that same connection.
    func withSessionLock<T: Sendable>(
        _ key: Int64,
        _ body: @Sendable (_ run: @Sendable (String) async throws -> Void, _ rows: @Sendable (String) async throws -> Int) async throws -> T
    ) async throws -> T {
        try await withConnection(deadline: .seconds(300)) { connection in
            let run: @Sendable (String) async throws -> Void = { statement in
                _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: Self.logger)
            }
            let rows: @Sendable (String) async throws -> Int = { statement in
                var count = 0
                for try await _ in try await connection.query(PostgresQuery(unsafeSQL: statement), logger: Self.logger) { count += 1 }
                return count
            }
            try await run("SELECT pg_advisory_lock(\(key))")
            return try await body(run, rows)  // NB: the lock ends with the connection
        }
    }

    /// Retries `body` while PostgreSQL says a database it needs is in use (SQLSTATE 55006): a
    /// connection just closed may take a moment to leave the server.
    func retryingWhileInUse(_ body: @Sendable () async throws -> Void) async throws {
        for attempt in 1... {
            do {
                return try await body()
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55006" && attempt < 50 {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    private func withConnection<T: Sendable>(deadline: Duration? = nil, _ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let configuration = try SQLPostgresConfiguration(url: url).coreConfiguration
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: Self.logger)
        let limit = deadline ?? self.deadline
        // NB: the watchdog closes the connection at the deadline, which fails the query in flight.
        let timedOut = Flag()
        let watchdog = Task {
            try await Task.sleep(for: limit)
            timedOut.raise()
            try? await connection.close()
        }
        defer { watchdog.cancel() }
        do {
            let value = try await body(connection)
            try? await connection.close()
            return value
        } catch {
            try? await connection.close()
            if timedOut.isRaised { throw TestFailure("PostgreSQL did not finish within \(limit): \(String(reflecting: error))") }
            throw error
        }
    }

    private static let logger = Logger(label: "test-admin")
}

private final class Flag: Sendable {
    private let raised = Atomic<Bool>(false)
    var isRaised: Bool { raised.load(ordering: .acquiring) }
    func raise() { raised.store(true, ordering: .releasing) }
}
