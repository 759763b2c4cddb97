import Foundation
import GRDB
import Testing
@testable import EventualKit

/// Issue 45: a device's database only grew. Now it gives back what it no longer uses, a few
/// pages per transaction; and the attachment cache's eviction holds at its limit.
@Suite("The device's database and cache give space back", .timeLimit(.minutes(2)))
struct CompactionTests {
    private static let rows = 10_000

    /// Fills `table` (a text column `body`) with about 20 MiB, then removes all but the first ten rows.
    private static func fillAndEmpty(_ writer: any DatabaseWriter, table: String) async throws {
        try await writer.write { db in
            for index in 0..<rows {
                try db.execute(sql: "INSERT INTO \(table) (id, name) VALUES (?, ?)",
                               arguments: ["row-\(index)", String(repeating: "\(index % 10)", count: 2_000)])
            }
        }
        try await writer.write { db in try db.execute(sql: "DELETE FROM \(table) WHERE id NOT IN (SELECT id FROM \(table) ORDER BY rowid LIMIT 10)") }
    }

    private static func state(_ store: LocalStore) throws -> (mode: Compaction.Mode, free: Int, pages: Int) {
        try store.reader.read { db in try Compaction.state(db) }
    }

    private static func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    @Test func aNewDatabaseGivesBackWhatItFreesAFewPagesAtATimeAndKeepsWhatItHolds() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.url.appendingPathComponent("store.sqlite").path
        let store = try LocalStore(path: path, migrations: [itemsMigration])
        // Given a database made by the engine, that held 20 MiB and now holds ten rows
        #expect(try Self.state(store).mode == .incremental)
        try await Self.fillAndEmpty(store.writer, table: "items")
        let full = try Self.state(store)
        _ = try await store.writer.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        let sizeBefore = try Self.fileSize(path)
        #expect(full.free > 4_000, "\(full)")

        // And a count of steps below zero gives back nothing, and traps nothing
        #expect(try await store.compact(maxSteps: -3) == 0)
        #expect(try Self.state(store).free == full.free)

        // When it compacts in two steps at most
        let freed = try await store.compact(maxSteps: 2)
        // Then it gave back two steps' free pages, no more (and the pointer-map pages that
        // tracked them: SQLite's auto vacuum keeps one for every few hundred pages)
        #expect(try Self.state(store).free == full.free - 2 * Compaction.pagesPerStep)
        #expect((2 * Compaction.pagesPerStep)...(2 * Compaction.pagesPerStep + 4) ~= freed, "\(freed)")

        // When it compacts until nothing is worth it
        while try await store.compact() > 0 {}
        // Then what is free is the slack, the file is smaller on disk, and the ten rows are whole
        let after = try Self.state(store)
        #expect(after.free <= Compaction.slackPages)
        #expect(after.pages <= full.pages - (full.free - after.free), "\(after) of \(full)")
        let sizeAfter = try Self.fileSize(path)
        #expect(sizeAfter < sizeBefore - 8_000_000, "\(sizeAfter) bytes of \(sizeBefore)")
        let kept = try await store.reader.read { db in try String.fetchAll(db, sql: "SELECT name FROM items ORDER BY rowid") }
        #expect(kept == (0..<10).map { String(repeating: "\($0)", count: 2_000) })
        // And a compaction with nothing to give back does nothing
        #expect(try await store.compact() == 0)
    }

    @Test func aDatabaseMadeBeforeAutoVacuumIsRewrittenOnceWhenAQuarterOfItIsFree() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.url.appendingPathComponent("store.sqlite").path
        // Given a database made by an engine that set no auto vacuum, with a table and 20 MiB freed
        do {
            let old = try DatabasePool(path: path)
            try await old.write { db in try db.execute(sql: "CREATE TABLE items (id TEXT PRIMARY KEY, name TEXT NOT NULL)") }
            try await Self.fillAndEmpty(old, table: "items")
            try old.close()
        }
        let store = try LocalStore(path: path, migrations: [])
        let before = try Self.state(store)
        #expect(before.mode == .none && before.free > 4_000, "\(before)")

        // When it compacts
        #expect(try await store.compact() > 4_000)
        // Then it was rewritten once: reclaiming incrementally from now on, nothing free, the rows whole
        let after = try Self.state(store)
        #expect(after.mode == .incremental && after.free == 0, "\(after)")
        let count = try await store.reader.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM items") }
        #expect(count == 10)
    }

    @Test func aDatabaseMadeBeforeAutoVacuumWithLittleFreeIsNotRewritten() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let path = scratch.url.appendingPathComponent("store.sqlite").path
        do {
            let old = try DatabasePool(path: path)
            try await old.write { db in
                // NB: rows of 3,000 bytes, a page each: 10,000 pages kept, 3,000 freed, short of the quarter a rewrite waits for.
                try db.execute(sql: "CREATE TABLE items (id TEXT PRIMARY KEY, name TEXT NOT NULL)")
                try db.execute(sql: "CREATE TABLE gone (id TEXT PRIMARY KEY, name TEXT NOT NULL)")
                for (table, count) in [("items", 10_000), ("gone", 3_000)] {
                    for index in 0..<count {
                        try db.execute(sql: "INSERT INTO \(table) (id, name) VALUES (?, ?)", arguments: ["row-\(index)", String(repeating: "x", count: 3_000)])
                    }
                }
                try db.execute(sql: "DROP TABLE gone")
            }
            try old.close()
        }
        let store = try LocalStore(path: path, migrations: [])
        let before = try Self.state(store)
        #expect(before.free >= Compaction.rewriteAtFreePages && before.free * 4 < before.pages, "\(before)")
        #expect(try await store.compact() == 0)
        let after = try Self.state(store)
        #expect(after.mode == .none && after.free == before.free && after.pages == before.pages, "\(after)")
    }

    // MARK: - The attachment cache at its limit

    /// A store with downloads of `sizes` bytes, read in that order (the first least recently).
    private func cache(_ sizes: [Int64], mine: [Int64] = []) async throws -> LocalStore {
        let store = try LocalStore(writer: DatabaseQueue())
        try await store.writer.write { db in
            for (index, size) in sizes.enumerated() {
                try AttachmentTable.downloaded("d\(index)", size: size, space: nil, at: Int64(index + 1), db)
            }
            for (index, size) in mine.enumerated() {
                try db.execute(sql: "INSERT INTO eventual_attachments (sha256, size, origin, last_used_at) VALUES (?, ?, 'mine', 0)",
                               arguments: ["m\(index)", size])
            }
        }
        return store
    }

    private func evict(_ store: LocalStore, budget: Int64, keeping kept: String) async throws -> (evicted: [String], left: [String]) {
        try await store.writer.write { db in
            let evicted = try AttachmentTable.evict(beyond: budget, keeping: kept, db)
            return (evicted, try String.fetchAll(db, sql: "SELECT sha256 FROM eventual_attachments ORDER BY sha256"))
        }
    }

    @Test func downloadsThatFillTheBudgetExactlyAreAllKept() async throws {
        let store = try await cache([100, 200, 300])
        let (evicted, left) = try await evict(store, budget: 600, keeping: "d2")
        #expect(evicted.isEmpty && left == ["d0", "d1", "d2"])
    }

    @Test func oneBytePastTheBudgetEvictsTheLeastRecentlyReadOnly() async throws {
        let store = try await cache([100, 200, 301])
        let (evicted, left) = try await evict(store, budget: 600, keeping: "d2")
        #expect(evicted == ["d0"] && left == ["d1", "d2"])
    }

    @Test func theFileJustReadIsKeptEvenWhenItAloneIsPastTheBudget() async throws {
        let store = try await cache([100, 200, 5_000])
        let (evicted, left) = try await evict(store, budget: 600, keeping: "d2")
        #expect(evicted == ["d0", "d1"] && left == ["d2"])
        // And a budget of nothing keeps only that file too
        let none = try await cache([1, 1])
        let (evictedAtZero, leftAtZero) = try await evict(none, budget: 0, keeping: "d0")
        #expect(evictedAtZero == ["d1"] && leftAtZero == ["d0"])
    }

    @Test func attachmentsMadeOnThisDeviceAreNeverEvictedNorCountedInTheBudget() async throws {
        let store = try await cache([100, 200], mine: [10_000])
        let (evicted, left) = try await evict(store, budget: 300, keeping: "d1")
        #expect(evicted.isEmpty && left == ["d0", "d1", "m0"])
        let (pastBudget, remaining) = try await evict(store, budget: 250, keeping: "d1")
        #expect(pastBudget == ["d0"] && remaining == ["d1", "m0"])
    }
}
