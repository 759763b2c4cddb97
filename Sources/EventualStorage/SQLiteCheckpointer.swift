import Foundation
import VaporCSQLite

/// Copies the write-ahead log back into the database file on a thread of its own, so that the
/// writer never does it in the middle of a request.
///
/// NB: by default SQLite checkpoints inside the commit that takes the log past 1,000 pages: under
/// a load of a thousand writes a second that was a copy and two fsyncs every quarter of a second
/// on the writer's thread, with every write queued behind it. A passive checkpoint here never
/// waits for a lock and never blocks the writer; the writer still checkpoints by itself past
/// `writerFallbackPages`, should this thread fall behind.
final class SQLiteCheckpointer: @unchecked Sendable {
    // NB: @unchecked because `handle` is used only on the checkpointer's thread, and the stop flag
    // is guarded by its condition lock.
    static let interval: TimeInterval = 0.2
    static let writerFallbackPages = 16_000

    private let handle: OpaquePointer
    private let wake = NSCondition()
    private var isStopping = false
    private var hasStopped = false

    init(path: String) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let status = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            if let handle { sqlite_nio_sqlite3_close_v2(handle) }
            throw SQLiteWriteError(code: status, message: "cannot open \(path) for checkpoints")
        }
        // NB: this connection never commits, so it never checkpoints by itself either.
        sqlite_nio_sqlite3_wal_autocheckpoint(handle, 0)
        self.handle = handle
        let thread = Thread { [self] in run() }
        thread.name = "sqlite-checkpoint"
        thread.start()
    }

    private func run() {
        wake.lock()
        while !isStopping {
            wake.unlock()
            var logPages: Int32 = 0, copied: Int32 = 0
            // NB: a failure (a full disk, another process's lock) leaves the log as it is; the next
            // round, or the writer past its fallback, tries again.
            _ = sqlite_nio_sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logPages, &copied)
            wake.lock()
            if !isStopping { _ = wake.wait(until: Date(timeIntervalSinceNow: Self.interval)) }
        }
        sqlite_nio_sqlite3_close_v2(handle)
        hasStopped = true
        wake.broadcast()
        wake.unlock()
    }

    /// Stops the thread and closes its connection; returns once both are done.
    func stop() {
        wake.lock()
        isStopping = true
        wake.broadcast()
        while !hasStopped { wake.wait() }
        wake.unlock()
    }
}
