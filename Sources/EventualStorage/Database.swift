import Foundation
import Logging
import NIOPosix
import PostgresKit
import SQLKit
import SQLiteKit
import Synchronization
import ServiceLifecycle

/// The server's database: one SQLite file (one writer connection plus fast read-only
/// connections) or a PostgreSQL connection pool. Every query in the server is written once, with
/// SQLKit, and runs on both.
///
/// It is a `Service`: added to the application, it closes its connections on shutdown.
public final class Database: Service, Sendable {
    /// Which database this is, for the few statements the two spell differently.
    public enum Dialect: Sendable { case sqlite, postgres }

    private enum Backend: Sendable {
        case sqlite(writer: SQLiteWriter, lock: AsyncLock)
        case postgres(client: PostgresClient, runner: Task<Void, Never>)
    }

    /// How the database is opened and watched.
    public struct Options: Sendable {
        /// How long an SQLite write waits for a lock another process holds before it fails (`StorageAvailability.busy`).
        public var busyTimeout: Duration = .seconds(2)
        /// The largest the SQLite file may grow; past it writes fail as on a full disk (nil: no cap).
        public var maxSQLiteBytes: Int? = nil
        /// Told how long each caller waited for a connection (the server counts it in its metrics).
        public var databaseWaited: (@Sendable (Duration) -> Void)? = nil
        /// Most PostgreSQL connections at once (nil: two per core, at least 4). NB: with PostgreSQL on
        /// the same few cores, more connections than that only add contention.
        public var postgresPoolSize: Int? = nil

        public init() {}
    }

    public let dialect: Dialect
    /// Read-only SQLite connections that run the hot look-ups on the caller's thread (nil on PostgreSQL).
    public let fastReader: SQLiteFastReader?
    private let backend: Backend
    /// How to open a PostgreSQL connection of its own, outside the pool (`listen`).
    private let postgresConnection: PostgresConnection.Configuration?
    private let logger: Logger
    private let databaseWaited: (@Sendable (Duration) -> Void)?
    /// Until when (Unix ms) SQLite writes fail at once, after one found another process's lock.
    /// NB: writers queue for the single connection; without this each would wait the whole busy
    /// timeout in turn, and the tenth would answer after ten timeouts.
    private let busyUntil = Atomic<Int64>(0)
    private static let busyWindow: Int64 = 500

    private init(dialect: Dialect, backend: Backend, postgresConnection: PostgresConnection.Configuration? = nil,
                 fastReader: SQLiteFastReader?, logger: Logger, databaseWaited: (@Sendable (Duration) -> Void)?) {
        self.dialect = dialect
        self.backend = backend
        self.postgresConnection = postgresConnection
        self.fastReader = fastReader
        self.logger = logger
        self.databaseWaited = databaseWaited
    }

    /// Opens (creating an SQLite file and its folder if needed) and migrates the database.
    public static func open(_ location: DatabaseLocation, logger: Logger, options: Options = Options()) async throws -> Database {
        // NB: the drivers log every statement with its bound values (token hashes, the session key on
        // first start) and PostgreSQL's wire messages at debug and trace. Those levels are never
        // passed on to them, whatever the server's own level.
        var driverLogger = logger
        driverLogger.logLevel = max(logger.logLevel, .notice)
        let database: Database
        switch location {
        case .sqlite(let path):
            database = try await openSQLite(path: path, logger: driverLogger, options: options)
        case .postgres(let url):
            database = try openPostgres(url: url, logger: driverLogger, options: options)
        }
        do {
            try await Migrator(database: database).migrate()
        } catch {
            await database.close()
            throw error
        }
        return database
    }

    private static func openSQLite(path: String, logger: Logger, options: Options) async throws -> Database {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw StorageError.cannotOpen("cannot create the folder \(directory.path): \(error.localizedDescription)")
        }
        // NB: the writer runs its statements on a thread of its own. On NIO's shared pool it queued
        // behind whatever else used that pool (bcrypt did, once), and every write waited.
        let writer: SQLiteWriter
        do {
            writer = try SQLiteWriter(path: path)
        } catch {
            throw StorageError.cannotOpen(StorageError.logSafeDescription(of: error))
        }
        let sql = writer.sql
        // NB: without a busy handler SQLite fails at once while another process holds the write
        // lock, and SQLiteNIO's retried for ever (the server spun at full CPU and every write hung).
        // A busy timeout waits a while; past it the write fails with SQLITE_BUSY, which the caller
        // sees as `StorageAvailability.busy` (something to retry, not a failure of the server).
        var pragmas = ["PRAGMA busy_timeout = \(max(0, Int64(options.busyTimeout / .milliseconds(1))))",
                       "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON",
                       // NB: SQLite's default cache (2 MiB) made every insert of a million analytics
                       // events read its index pages back from the kernel; the mapping serves the
                       // analytics questions' scans without copies.
                       "PRAGMA cache_size = -65536", "PRAGMA mmap_size = 268435456",
                       // NB: the checkpoints run on a thread of their own (SQLiteCheckpointer); this
                       // is the writer's fallback should that thread fall behind.
                       "PRAGMA wal_autocheckpoint = \(SQLiteCheckpointer.writerFallbackPages)"]
        do {
            try await writer.run {
                if let maxBytes = options.maxSQLiteBytes {
                    let pageSize = try await sql.raw("PRAGMA page_size").first()?.decode(column: "page_size", as: Int.self) ?? 4096
                    pragmas.append("PRAGMA max_page_count = \(max(1, maxBytes / pageSize))")
                }
                for pragma in pragmas {
                    try await sql.raw(SQLQueryString(pragma)).run()
                }
            }
        } catch {
            await writer.close()
            throw error
        }
        let reader = SQLiteFastReader(path: path)
        return Database(dialect: .sqlite, backend: .sqlite(writer: writer, lock: AsyncLock()), fastReader: reader, logger: logger,
                        databaseWaited: options.databaseWaited)
    }

    private static func openPostgres(url: String, logger: Logger, options: Options) throws -> Database {
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
        var configuration = PostgresClient.Configuration(
            host: host, port: core.port ?? 5432, username: core.username,
            password: core.password, database: core.database, tls: tls
        )
        configuration.options.maximumConnections = max(1, options.postgresPoolSize ?? max(4, 2 * ProcessInfo.processInfo.activeProcessorCount))
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let runner = Task { await client.run() }
        return Database(dialect: .postgres, backend: .postgres(client: client, runner: runner), postgresConnection: core,
                        fastReader: nil, logger: logger, databaseWaited: options.databaseWaited)
    }

    /// The PostgreSQL pool, for the hot path's prepared statements (nil on SQLite).
    public var postgresClient: PostgresClient? {
        if case .postgres(let client, _) = backend { return client }
        return nil
    }

    /// Runs `body` with one connection, outside any explicit transaction.
    public func withConnection<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        let asked = ContinuousClock.now
        switch backend {
        case .sqlite(let writer, let lock):
            return try await writer.run {
                try await lock.withLock {
                    databaseWaited?(ContinuousClock.now - asked)
                    return try await body(writer.sql)
                }
            }
        case .postgres(let client, _):
            return try await client.withConnection { connection in
                databaseWaited?(ContinuousClock.now - asked)
                return try await body(connection.sql(queryLogLevel: nil))
            }
        }
    }

    /// PostgreSQL only: sends `payload` to every connection listening on `channel` (`NOTIFY`).
    public func notify(_ channel: String, payload: String) async throws {
        try await withConnection { sql in try await sql.raw("SELECT pg_notify(\(bind: channel), \(bind: payload))").run() }
    }

    /// PostgreSQL only: opens a connection of its own (the pool's are for queries), listens on
    /// `channel`, calls `listening` once the `LISTEN` holds, then hands each notification's
    /// payload to `receive`, until the connection fails (it throws) or the task is cancelled.
    public func listen(on channel: String, listening: () -> Void, receive: (String) -> Void) async throws {
        guard let configuration = postgresConnection else { throw StorageError.cannotOpen("only PostgreSQL listens for notifications") }
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        do {
            try await connection.listen(on: channel) { notifications in
                listening()
                for try await notification in notifications { receive(notification.payload) }
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
    }

    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws.
    public func transaction<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        // NB: SQLite's BEGIN IMMEDIATE takes the write lock up front, so a transaction that reads
        // and then writes cannot fail half-way with SQLITE_BUSY.
        let begin = dialect == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN"
        return try await withConnection { sql in
            if dialect == .sqlite, StorageClock.unixMillis() < busyUntil.load(ordering: .relaxed) { throw StorageError.busy }
            // NB: a BEGIN that fails (SQLITE_BUSY past the busy timeout) opened nothing to roll back.
            do {
                try await sql.raw(SQLQueryString(begin)).run()
            } catch {
                if StorageAvailability(error) == .busy {
                    busyUntil.store(StorageClock.unixMillis() + Self.busyWindow, ordering: .relaxed)
                }
                throw error
            }
            do {
                let result = try await body(sql)
                try await sql.raw("COMMIT").run()
                return result
            } catch {
                do {
                    try await sql.raw("ROLLBACK").run()
                } catch let rollbackError {
                    // NB: SQLite rolls a transaction back by itself after SQLITE_FULL and some I/O errors.
                    self.logger.warning("rollback failed", metadata: ["error": "\(StorageError.logSafeDescription(of: rollbackError))"])
                }
                throw error
            }
        }
    }

    /// Waits for the service group's graceful shutdown, then closes the connections.
    public func run() async throws {
        try? await gracefulShutdown()
        await close()
    }

    /// Closes every connection. Further queries fail.
    public func close() async {
        fastReader?.close()
        switch backend {
        case .sqlite(let writer, let lock):
            // NB: closing must happen even when the caller's task is cancelled (a service group
            // tearing down), so it runs in a task of its own that does not inherit cancellation.
            let closing = Task {
                _ = try? await lock.withLock { await writer.close() }
            }
            await closing.value
        case .postgres(_, let runner):
            runner.cancel()
            await runner.value
        }
    }
}
