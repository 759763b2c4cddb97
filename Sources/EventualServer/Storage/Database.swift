import Foundation
import Logging
import PostgresKit
import SQLKit
import SQLiteKit
import ServiceLifecycle

/// The server's database: one SQLite file (one writer connection plus fast read-only
/// connections) or a PostgreSQL connection pool. Every query in the server is written once, with
/// SQLKit, and runs on both.
///
/// It is a `Service`: added to the application, it closes its connections on shutdown.
public final class Database: Service, Sendable {
    enum Dialect: Sendable { case sqlite, postgres }

    private enum Backend: Sendable {
        case sqlite(writer: SQLiteConnection, lock: AsyncLock)
        case postgres(client: PostgresClient, runner: Task<Void, Never>)
    }

    let dialect: Dialect
    /// Read-only SQLite connections that run the hot look-ups on the caller's thread (nil on PostgreSQL).
    let fastReader: SQLiteFastReader?
    private let backend: Backend
    private let logger: Logger

    private init(dialect: Dialect, backend: Backend, fastReader: SQLiteFastReader?, logger: Logger) {
        self.dialect = dialect
        self.backend = backend
        self.fastReader = fastReader
        self.logger = logger
    }

    /// Opens (creating an SQLite file and its folder if needed) and migrates the database.
    public static func open(_ location: DatabaseLocation, logger: Logger) async throws -> Database {
        let database: Database
        switch location {
        case .sqlite(let path):
            database = try await openSQLite(path: path, logger: logger)
        case .postgres(let url):
            database = try openPostgres(url: url, logger: logger)
        }
        do {
            try await Migrator(database: database).migrate()
        } catch {
            await database.close()
            throw error
        }
        return database
    }

    private static func openSQLite(path: String, logger: Logger) async throws -> Database {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw StorageError.cannotOpen("cannot create the folder \(directory.path): \(error.localizedDescription)")
        }
        let writer = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        let sql = writer.sql(queryLogLevel: .trace)
        for pragma in ["PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON"] {
            try await sql.raw(SQLQueryString(pragma)).run()
        }
        let reader = SQLiteFastReader(path: path)
        return Database(dialect: .sqlite, backend: .sqlite(writer: writer, lock: AsyncLock()), fastReader: reader, logger: logger)
    }

    private static func openPostgres(url: String, logger: Logger) throws -> Database {
        let core: PostgresConnection.Configuration
        do {
            core = try SQLPostgresConfiguration(url: url).coreConfiguration
        } catch {
            throw StorageError.cannotOpen("invalid PostgreSQL URL: \(error)")
        }
        guard let host = core.host else {
            throw StorageError.cannotOpen("a PostgreSQL URL needs a host")
        }
        let tls: PostgresClient.Configuration.TLS
        if core.tls.isEnforced, let context = core.tls.sslContext {
            tls = .require(context.configuration)
        } else if core.tls.isAllowed, let context = core.tls.sslContext {
            tls = .prefer(context.configuration)
        } else {
            tls = .disable
        }
        let configuration = PostgresClient.Configuration(
            host: host, port: core.port ?? 5432, username: core.username,
            password: core.password, database: core.database, tls: tls
        )
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let runner = Task { await client.run() }
        return Database(dialect: .postgres, backend: .postgres(client: client, runner: runner), fastReader: nil, logger: logger)
    }

    /// Runs `body` with one connection, outside any explicit transaction.
    func withConnection<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        switch backend {
        case .sqlite(let writer, let lock):
            return try await lock.withLock { try await body(writer.sql(queryLogLevel: .trace)) }
        case .postgres(let client, _):
            return try await client.withConnection { connection in
                try await body(connection.sql(queryLogLevel: .trace))
            }
        }
    }

    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws.
    func transaction<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        // NB: SQLite's BEGIN IMMEDIATE takes the write lock up front, so a transaction that reads
        // and then writes cannot fail half-way with SQLITE_BUSY.
        let begin = dialect == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN"
        return try await withConnection { sql in
            try await sql.raw(SQLQueryString(begin)).run()
            do {
                let result = try await body(sql)
                try await sql.raw("COMMIT").run()
                return result
            } catch {
                do {
                    try await sql.raw("ROLLBACK").run()
                } catch let rollbackError {
                    self.logger.error("rollback failed", metadata: ["error": "\(String(reflecting: rollbackError))"])
                }
                throw error
            }
        }
    }

    public func run() async throws {
        try? await gracefulShutdown()
        await close()
    }

    /// Closes every connection. Further queries fail.
    func close() async {
        fastReader?.close()
        switch backend {
        case .sqlite(let writer, let lock):
            // NB: closing must happen even when the caller's task is cancelled (a service group
            // tearing down), so it runs in a task of its own that does not inherit cancellation.
            let closing = Task {
                do {
                    try await lock.withLock { try await writer.close() }
                } catch {
                    self.logger.error("closing the SQLite database failed", metadata: ["error": "\(error)"])
                }
            }
            await closing.value
        case .postgres(_, let runner):
            runner.cancel()
            await runner.value
        }
    }
}

/// A storage failure that is not the client's fault; logged in full, answered 500.
enum StorageError: Error, CustomStringConvertible {
    case cannotOpen(String)
    case corrupt(String)

    var description: String {
        switch self {
        case .cannotOpen(let reason): return "Cannot open the database: \(reason)"
        case .corrupt(let reason): return "Unexpected database content: \(reason)"
        }
    }
}
