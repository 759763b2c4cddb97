import Foundation
import Logging
import SQLKit
import Testing
import EventualStorage
import StorageTestSupport

/// The storage half of a locked or full database: the failure is one a caller can retry
/// (`StorageAvailability`), it comes soon, reads go on, and writes recover without reopening.
/// (What the client sees of it, a 503 with Retry-After, is in EventualServerTests' StorageFailureTests.)
@Suite("A locked or full database fails soon, as something to retry, and recovers", .timeLimit(.minutes(3)))
struct LockedOrFullDatabaseTests {
    @Test func aWriteLockHeldByAnotherConnectionFailsAsBusyWithinTheTimeoutWhileReadsGoOn() async throws {
        try await withScratchDatabase(busyTimeout: .milliseconds(300)) { database, path in
            // Given another connection that holds SQLite's write lock
            let lock = try await ForeignWriteLock.hold(.sqlite(path: path))
            // When a transaction writes
            let started = ContinuousClock.now
            let failure = await #expect(throws: (any Error).self) {
                try await database.transaction { sql in try await insertNote("blocked", on: sql) }
            }
            // Then it fails as busy soon after the busy timeout (20 s tells it from a hang under load)
            #expect(failure.flatMap(StorageAvailability.init) == .busy, "\(String(describing: failure))")
            #expect(ContinuousClock.now - started < .seconds(20))
            // And reads keep working
            #expect(try await noteCount(in: database) == 0)
            // And once the lock is released (and the busy window has passed), the same write succeeds
            try await lock.release()
            try await Task.sleep(for: .seconds(1))
            try await database.transaction { sql in try await insertNote("blocked", on: sql) }
            #expect(try await noteCount(in: database) == 1)
        }
    }

    @Test func writersQueuedBehindAForeignLockFailTogetherNotOneTimeoutEach() async throws {
        try await withScratchDatabase(busyTimeout: .seconds(3)) { database, path in
            // Given another connection that holds SQLite's write lock
            let lock = try await ForeignWriteLock.hold(.sqlite(path: path))
            // When ten transactions write at once
            let outcomes = await withTaskGroup(of: (busy: Bool, at: ContinuousClock.Instant).self) { group in
                for index in 0..<10 {
                    group.addTask {
                        do {
                            try await database.transaction { sql in try await insertNote("queued \(index)", on: sql) }
                            return (false, ContinuousClock.now)
                        } catch {
                            return (StorageAvailability(error) == .busy, ContinuousClock.now)
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            try await lock.release()
            // Then all fail as busy, together: one after another would space them a busy timeout (3 s) apart
            #expect(outcomes.map(\.busy) == Array(repeating: true, count: 10))
            let instants = outcomes.map(\.at)
            let spread = instants.max()! - instants.min()!
            #expect(spread < .seconds(6), "failures spread over \(spread)")
        }
    }

    @Test func aFullDatabaseFailsAsFullReadsGoOnAndWritesRecoverOnceSpaceIsFreed() async throws {
        try await withScratchDatabase(maxBytes: 3 * 1024 * 1024) { database, _ in
            // Given a database that fills up with large notes
            let large = String(repeating: "A", count: 900 * 1024)
            var written = 0
            var failure: (any Error)?
            for index in 0..<8 {
                do {
                    try await database.transaction { sql in try await insertNote("\(index) \(large)", on: sql) }
                    written += 1
                } catch {
                    failure = error
                    break
                }
            }
            // Then the write that does not fit fails as full, not as a broken database
            let full = try #require(failure)
            #expect(StorageAvailability(full) == .full, "\(StorageError.logSafeDescription(of: full))")
            #expect(written > 0)
            // And reads keep working
            #expect(try await noteCount(in: database) == written)
            // And once space is freed, writes work again without reopening the database
            try await database.transaction { sql in try await sql.delete(from: "notes").run() }
            try await database.transaction { sql in try await insertNote("again \(large)", on: sql) }
            #expect(try await noteCount(in: database) == 1)
        }
    }
}

private func withScratchDatabase(busyTimeout: Duration = .seconds(2), maxBytes: Int? = nil,
                                 _ body: (Database, String) async throws -> Void) async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-storage-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("db.sqlite").path
    var options = Database.Options()
    options.busyTimeout = busyTimeout
    options.maxSQLiteBytes = maxBytes
    let database = try await Database.open(.sqlite(path: path), logger: Logger(label: "test"), options: options)
    do {
        try await database.withConnection { sql in
            try await sql.raw("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)").run()
        }
        try await body(database, path)
    } catch {
        await database.close()
        throw error
    }
    await database.close()
}

private func insertNote(_ body: String, on sql: any SQLDatabase) async throws {
    try await sql.insert(into: "notes").columns("body").values(SQLBind(body)).run()
}

private func noteCount(in database: Database) async throws -> Int {
    try await database.withConnection { sql in
        try await sql.raw("SELECT COUNT(*) AS count FROM notes").first()?.decode(column: "count", as: Int.self) ?? -1
    }
}
