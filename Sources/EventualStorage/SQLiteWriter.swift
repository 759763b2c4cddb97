import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import Synchronization
import VaporCSQLite

/// SQLite's one write connection, with a thread of its own that is also a task executor: a
/// transaction's code runs on that thread from `BEGIN` to `COMMIT`, and each statement is a plain
/// call into SQLite, with its prepared statement cached.
///
/// NB: through SQLiteNIO every statement was two thread hops (to its pool and back through an
/// event loop), a push of nine statements eighteen, all while the single writer was held: under
/// 256 connections the writes queued for hundreds of milliseconds. Here a transaction is one
/// hop to the writer's thread and one back, however many statements it runs.
final class SQLiteWriter: TaskExecutor, @unchecked Sendable {
    // NB: @unchecked because `connection` is touched only on the writer's thread (every use goes
    // through `run(_:)`, which runs on it), and the job queue is guarded by its condition lock.
    private let connection: SQLiteWriteConnection
    private let checkpointer: SQLiteCheckpointer
    private let jobs = NSCondition()
    private var queue: [UnownedJob] = []
    private var isStopping = false
    private var threadHasExited = false
    private let stopped = NSCondition()
    private var hasStopped = false

    /// Opens `path` (creating it) and starts the writer's thread.
    init(path: String) throws {
        connection = try SQLiteWriteConnection(path: path)
        do {
            checkpointer = try SQLiteCheckpointer(path: path)
        } catch {
            connection.close()
            throw error
        }
        // NB: the thread keeps the writer alive until `close()` stops it.
        let thread = Thread { [self] in runJobs() }
        thread.name = "sqlite-writer"
        thread.start()
    }

    /// The connection as SQLKit sees it. Use it only inside `run(_:)`.
    var sql: any SQLDatabase { connection }

    /// Runs `body` on the writer's thread; the statements it runs on `sql` do not hop.
    func run<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        try await withTaskExecutorPreference(self) { try await body() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.lock()
        guard !threadHasExited else {
            jobs.unlock()
            // NB: a task that reaches a closed writer must still run (to find the connection
            // closed and throw), never wait for ever on a thread that is gone.
            let executor = asUnownedTaskExecutor()
            Thread { job.runSynchronously(on: executor) }.start()
            return
        }
        queue.append(job)
        jobs.signal()
        jobs.unlock()
    }

    private func stopThread() {
        jobs.lock()
        isStopping = true
        jobs.signal()
        jobs.unlock()
    }

    private func runJobs() {
        // NB: every write waits for this one thread: it runs before the request handlers when it can.
        ThreadPriority.raise(toOneOf: [-10, -5, -1])
        let executor = asUnownedTaskExecutor()
        while true {
            jobs.lock()
            while queue.isEmpty && !isStopping { jobs.wait() }
            if queue.isEmpty {
                threadHasExited = true
                jobs.unlock()
                break
            }
            let batch = queue
            queue.removeAll(keepingCapacity: true)
            jobs.unlock()
            for job in batch { job.runSynchronously(on: executor) }
        }
        stopped.lock()
        hasStopped = true
        stopped.broadcast()
        stopped.unlock()
    }

    /// Closes the connection and stops the thread once the jobs already queued have run.
    func close() async {
        _ = try? await run {
            checkpointer.stop()
            connection.close()
        }
        stopThread()
        // NB: waited for on a thread of its own, never on the cooperative pool.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread { [self] in
                stopped.lock()
                while !hasStopped { stopped.wait() }
                stopped.unlock()
                continuation.resume()
            }.start()
        }
    }
}

/// An SQLite error from the writer, with SQLite's extended result code.
public struct SQLiteWriteError: Error, CustomStringConvertible {
    public let code: Int32
    /// SQLite's message: it names tables, columns and constraints, never bound values.
    public let message: String

    /// The primary result code (SQLITE_BUSY, SQLITE_FULL, SQLITE_IOERR, ...).
    public var primaryCode: Int32 { code & 0xFF }

    public var description: String { "SQLite error \(code): \(message)" }
}

/// The writer's connection, as an `SQLDatabase` whose statements run at once on the calling thread.
///
/// NB: `@unchecked Sendable` because SQLite's handle is not thread-safe by itself: `SQLiteWriter`
/// calls it only on its own thread.
final class SQLiteWriteConnection: SQLDatabase, @unchecked Sendable {
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    /// Prepared statements kept at most (statements with IN lists of every length add up).
    private static let maxCachedStatements = 256
    private let encoder = SQLiteDataEncoder()
    private let decoder = SQLiteDataDecoder()

    fileprivate init(path: String) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let status = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "out of memory"
            if let handle { sqlite_nio_sqlite3_close_v2(handle) }
            throw SQLiteWriteError(code: status, message: "cannot open \(path): \(message)")
        }
        self.handle = handle
    }

    fileprivate func close() {
        for statement in statements.values { sqlite_nio_sqlite3_finalize(statement) }
        statements.removeAll()
        if let handle { sqlite_nio_sqlite3_close_v2(handle) }
        handle = nil
    }

    // MARK: SQLDatabase

    // NB: made once: SQLKit reads the dialect many times for every statement it writes.
    let logger = Logger(label: "eventual-server.sqlite-writer")
    let dialect: any SQLDialect = SQLiteDialect()
    var eventLoop: any EventLoop { MultiThreadedEventLoopGroup.singleton.any() }
    var queryLogLevel: Logger.Level? { nil }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) async throws {
        try executeNow(query, onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) -> EventLoopFuture<Void> {
        eventLoop.makeCompletedFuture { try executeNow(query, onRow) }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await closure(self)
    }

    // MARK: Statements

    private func executeNow(_ query: any SQLExpression, _ onRow: (any SQLRow) -> ()) throws {
        guard let handle else { throw SQLiteWriteError(code: SQLITE_MISUSE, message: "the database is closed") }
        let (text, binds) = serialize(query)
        let statement = try prepared(text, on: handle)
        defer {
            sqlite_nio_sqlite3_reset(statement)
            sqlite_nio_sqlite3_clear_bindings(statement)
        }
        for (index, value) in binds.enumerated() {
            try bind(try encoder.encode(value), at: Int32(index + 1), in: statement, on: handle)
        }
        var columns: [String]?
        while true {
            let status = sqlite_nio_sqlite3_step(statement)
            if status == SQLITE_DONE { return }
            guard status == SQLITE_ROW else { throw failure(status, on: handle) }
            let count = sqlite_nio_sqlite3_column_count(statement)
            if columns == nil {
                columns = (0..<count).map { String(cString: sqlite_nio_sqlite3_column_name(statement, $0)) }
            }
            onRow(WriterRow(columns: columns!, values: (0..<count).map { value(at: $0, in: statement) }, decoder: decoder))
        }
    }

    private func prepared(_ text: String, on handle: OpaquePointer) throws -> OpaquePointer {
        if let statement = statements[text] { return statement }
        if statements.count >= Self.maxCachedStatements {
            for statement in statements.values { sqlite_nio_sqlite3_finalize(statement) }
            statements.removeAll()
        }
        var statement: OpaquePointer?
        let status = sqlite_nio_sqlite3_prepare_v3(handle, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw failure(status, on: handle) }
        statements[text] = statement
        return statement
    }

    private func bind(_ data: SQLiteData, at index: Int32, in statement: OpaquePointer, on handle: OpaquePointer) throws {
        let status: Int32
        switch data {
        case .integer(let value):
            status = sqlite_nio_sqlite3_bind_int64(statement, index, Int64(value))
        case .float(let value):
            status = sqlite_nio_sqlite3_bind_double(statement, index, value)
        case .text(let value):
            status = sqlite_nio_sqlite3_bind_text64(statement, index, value, UInt64(value.utf8.count), transientDestructor, UInt8(SQLITE_UTF8))
        case .blob(let buffer):
            status = buffer.withUnsafeReadableBytes {
                sqlite_nio_sqlite3_bind_blob64(statement, index, $0.baseAddress, UInt64($0.count), transientDestructor)
            }
        case .null:
            status = sqlite_nio_sqlite3_bind_null(statement, index)
        }
        guard status == SQLITE_OK else { throw failure(status, on: handle) }
    }

    private func value(at column: Int32, in statement: OpaquePointer) -> SQLiteData {
        switch sqlite_nio_sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER:
            return .integer(SQLiteInt64(sqlite_nio_sqlite3_column_int64(statement, column)))
        case SQLITE_FLOAT:
            return .float(sqlite_nio_sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            // NB: read by its length, not up to the first NUL.
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            guard let pointer = sqlite_nio_sqlite3_column_text(statement, column) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            guard let pointer = sqlite_nio_sqlite3_column_blob(statement, column) else { return .blob(ByteBuffer()) }
            return .blob(ByteBuffer(bytes: UnsafeRawBufferPointer(start: pointer, count: count)))
        default:
            return .null
        }
    }

    private func failure(_ status: Int32, on handle: OpaquePointer) -> SQLiteWriteError {
        SQLiteWriteError(code: sqlite_nio_sqlite3_extended_errcode(handle), message: String(cString: sqlite_nio_sqlite3_errmsg(handle)))
    }
}

/// A row the writer read, with its values already copied out of SQLite.
private struct WriterRow: SQLRow {
    let columns: [String]
    let values: [SQLiteData]
    let decoder: SQLiteDataDecoder

    var allColumns: [String] { columns }

    func contains(column: String) -> Bool { columns.contains(column) }

    func decodeNil(column: String) throws -> Bool {
        guard let index = columns.firstIndex(of: column) else { return true }
        return values[index] == .null
    }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let index = columns.firstIndex(of: column) else {
            throw SQLiteWriteError(code: SQLITE_ERROR, message: "no column \(column) in the result")
        }
        return try decoder.decode(D.self, from: values[index])
    }
}

// NB: SQLITE_TRANSIENT is a C macro Swift cannot import: it tells SQLite to copy the bound bytes.
private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
