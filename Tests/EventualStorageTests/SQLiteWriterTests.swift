import Foundation
import Logging
import SQLKit
import Testing
import EventualStorage

@Suite("The SQLite writer's thread", .timeLimit(.minutes(2)))
struct SQLiteWriterTests {
    private func withDatabase(_ body: (Database) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-writer-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try await Database.open(.sqlite(path: folder.appendingPathComponent("db.sqlite").path), logger: Logger(label: "test"))
        do {
            try await database.withConnection { sql in
                try await sql.raw("CREATE TABLE counters (name TEXT PRIMARY KEY, value BIGINT NOT NULL)").run()
                try await sql.raw("CREATE TABLE texts (id INTEGER PRIMARY KEY, body TEXT NOT NULL)").run()
            }
            try await body(database)
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }

    @Test func concurrentReadModifyWriteTransactionsLoseNothing() async throws {
        try await withDatabase { database in
            try await database.withConnection { sql in
                try await sql.insert(into: "counters").columns("name", "value").values(SQLBind("hits"), SQLBind(Int64(0))).run()
            }
            // When 200 tasks each read the counter and write it back plus one, in transactions
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        try await database.transaction { sql in
                            let value = try await sql.select().column("value").from("counters").where("name", .equal, "hits")
                                .first()?.decode(column: "value", as: Int64.self) ?? -1
                            // NB: a suspension inside the transaction: another one must still not interleave.
                            await Task.yield()
                            try await sql.update("counters").set("value", to: value + 1).where("name", .equal, "hits").run()
                        }
                    }
                }
                try await group.waitForAll()
            }
            // Then every increment is there
            let value = try await database.withConnection { sql in
                try await sql.select().column("value").from("counters").first()?.decode(column: "value", as: Int64.self)
            }
            #expect(value == 200)
        }
    }

    @Test func aFailedTransactionIsRolledBackWithSQLitesCode() async throws {
        try await withDatabase { database in
            await #expect(throws: SQLiteWriteError.self) {
                try await database.transaction { sql in
                    try await sql.insert(into: "counters").columns("name", "value").values(SQLBind("a"), SQLBind(Int64(1))).run()
                    try await sql.insert(into: "counters").columns("name", "value").values(SQLBind("a"), SQLBind(Int64(2))).run()
                }
            }
            do {
                try await database.withConnection { sql in
                    try await sql.insert(into: "counters").columns("name", "value").values(SQLBind("b"), SQLBind(Int64(1))).run()
                    try await sql.insert(into: "counters").columns("name", "value").values(SQLBind("b"), SQLBind(Int64(2))).run()
                }
                Issue.record("a duplicate key was accepted")
            } catch let error as SQLiteWriteError {
                #expect(error.primaryCode == 19, "SQLITE_CONSTRAINT, not \(error)")
                #expect(error.message.contains("UNIQUE"), "\(error.message)")
            }
            // The first transaction left nothing behind
            let names = try await database.withConnection { sql in
                try await sql.select().column("name").from("counters").orderBy("name").all().map { try $0.decode(column: "name", as: String.self) }
            }
            #expect(names == ["b"])
        }
    }

    @Test func textComesBackWholeWithEveryByte() async throws {
        try await withDatabase { database in
            let texts = ["plain", "with a NUL\u{0} inside", "emoji 🍵 and é", "", String(repeating: "x", count: 100_000)]
            let read = try await database.withConnection { sql in
                for (index, text) in texts.enumerated() {
                    try await sql.insert(into: "texts").columns("id", "body").values(SQLBind(index), SQLBind(text)).run()
                }
                return try await sql.select().column("body").from("texts").orderBy("id").all()
                    .map { try $0.decode(column: "body", as: String.self) }
            }
            #expect(read == texts)
        }
    }

    @Test func aClosedDatabaseFailsAtOnceInsteadOfHanging() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-writer-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try await Database.open(.sqlite(path: folder.appendingPathComponent("db.sqlite").path), logger: Logger(label: "test"))
        await database.close()
        await #expect(throws: (any Error).self) {
            try await database.withConnection { sql in try await sql.raw("SELECT 1").run() }
        }
    }
}
