import Synchronization
import VaporCSQLite

/// Read-only SQLite connections that run a prepared statement on the calling thread.
///
/// The hot look-up (`GET /products?barcode=`) must not pay two thread hops per request, as a
/// query through SQLiteNIO's thread pool does. In WAL mode readers never block the writer, so
/// a handful of read-only connections, each used by one thread at a time, serve it directly.
/// NB: these are connections of the same SQLite library copy that SQLiteNIO links, so POSIX
/// locks on the file stay consistent (two SQLite copies on one file can corrupt it).
public final class SQLiteFastReader: Sendable {
    private let path: String
    private let idle = Mutex<[SQLiteReadConnection]>([])
    private let isClosed = Atomic<Bool>(false)

    init(path: String) {
        self.path = path
    }

    /// Runs `body` with an idle read connection (opening one if none is idle).
    public func read<R>(_ body: (SQLiteReadConnection) throws -> R) throws -> R {
        guard !isClosed.load(ordering: .relaxed) else { throw SQLiteReadError(message: "the database is closed") }
        let connection = try idle.withLock { $0.popLast() } ?? SQLiteReadConnection(path: path)
        defer { idle.withLock { $0.append(connection) } }
        return try body(connection)
    }

    func close() {
        isClosed.store(true, ordering: .relaxed)
        idle.withLock { $0.removeAll() }
    }
}

/// A failure of a fast read, with SQLite's message (which names tables and columns, never values).
public struct SQLiteReadError: Error, CustomStringConvertible {
    let message: String
    public var description: String { "SQLite read failed: \(message)" }
}

/// One read-only connection with its cache of prepared statements.
///
/// NB: `@unchecked Sendable` because it is not thread-safe by itself: `SQLiteFastReader` hands
/// it to one caller at a time (checked out of, then back into, a mutex-guarded list), and
/// `read(_:)` takes a synchronous closure, so it never crosses a suspension point in use.
public final class SQLiteReadConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    fileprivate init(path: String) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let status = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            if let handle { sqlite_nio_sqlite3_close_v2(handle) }
            throw SQLiteReadError(message: "cannot open \(path) (code \(status))")
        }
        sqlite_nio_sqlite3_busy_timeout(handle, 5_000)
        // NB: memory-mapped reads skip a copy of every page from the OS cache into SQLite's own,
        // which the profile of the look-up showed (readDbPage, copy_to_iter).
        sqlite_nio_sqlite3_exec(handle, "PRAGMA mmap_size = 0", nil, nil, nil)
        sqlite_nio_sqlite3_exec(handle, "PRAGMA cache_size = -16384", nil, nil, nil)
        self.handle = handle
    }

    deinit {
        for statement in statements.values { sqlite_nio_sqlite3_finalize(statement) }
        sqlite_nio_sqlite3_close_v2(handle)
    }

    /// Runs a query with text parameters and hands each row to `row`.
    public func query(_ sql: String, _ parameters: [String], row: (SQLiteRowCursor) throws -> Void) throws {
        let statement = try prepared(sql)
        defer {
            sqlite_nio_sqlite3_reset(statement)
            sqlite_nio_sqlite3_clear_bindings(statement)
        }
        for (index, parameter) in parameters.enumerated() {
            let status = sqlite_nio_sqlite3_bind_text64(
                statement, Int32(index + 1), parameter, UInt64(parameter.utf8.count), transientDestructor, UInt8(SQLITE_UTF8)
            )
            guard status == SQLITE_OK else { throw error(status) }
        }
        while true {
            let status = sqlite_nio_sqlite3_step(statement)
            if status == SQLITE_DONE { return }
            guard status == SQLITE_ROW else { throw error(status) }
            try row(SQLiteRowCursor(statement: statement))
        }
    }

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let status = sqlite_nio_sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw error(status) }
        statements[sql] = statement
        return statement
    }

    private func error(_ status: Int32) -> SQLiteReadError {
        SQLiteReadError(message: String(cString: sqlite_nio_sqlite3_errmsg(handle)) + " (code \(status))")
    }
}

/// The current row of a statement, read by column index.
public struct SQLiteRowCursor {
    fileprivate let statement: OpaquePointer

    /// The column's text, or nil when it is NULL.
    public func text(_ column: Int32) -> String? {
        guard let pointer = sqlite_nio_sqlite3_column_text(statement, column) else { return nil }
        return String(cString: pointer)
    }

    /// The column's integer (0 when it is NULL).
    public func int64(_ column: Int32) -> Int64 {
        sqlite_nio_sqlite3_column_int64(statement, column)
    }
}

// NB: SQLITE_TRANSIENT is a C macro Swift cannot import: it tells SQLite to copy the bound bytes.
private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
