import Foundation
import Logging
import SQLKit
import Testing
@testable import EventualServer

@Suite("Storage: migrations and schema", .timeLimit(.minutes(2)))
struct StorageTests {
    @Test(arguments: Backend.available)
    func migrationsAreRecordedAndAppliedOnce(_ backend: Backend) async throws {
        let scratch = try await ScratchDatabase.make(backend, emptyOfTables: true)
        let logger = Logger(label: "test")
        // Given a database opened (and migrated) twice
        let first = try await Database.open(scratch.location, logger: logger)
        await first.close()
        let second = try await Database.open(scratch.location, logger: logger)
        // Then each migration is recorded exactly once
        let versions = try await second.withConnection { sql in
            try await sql.select().column("version").from("schema_migrations").orderBy("version").all()
                .map { try $0.decode(column: "version", as: Int.self) }
        }
        #expect(versions == Migration.all.map(\.version))
        await second.close()
        await scratch.remove()
    }

    @Test(arguments: Backend.available)
    func schemaRefusesAVoteOutsideTheRatingRangeAndAnOrphanVote(_ backend: Backend) async throws {
        let scratch = try await ScratchDatabase.make(backend)
        let database = try await Database.open(scratch.location, logger: Logger(label: "test"))
        await #expect(throws: (any Error).self) {
            try await database.withConnection { sql in
                try await sql.raw("INSERT INTO votes (id, product_id, user_id, rating, created_at, updated_at) VALUES ('v', 'no-product', 'no-user', 1, 0, 0)").run()
            }
        }
        await database.close()
        await scratch.remove()
    }

    @Test func sqliteFileAndFolderAreCreatedOnFirstStart() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-first-start-\(UUID().uuidString)")
        let path = folder.appendingPathComponent("nested/eventual.sqlite").path
        let database = try await Database.open(.sqlite(path: path), logger: Logger(label: "test"))
        #expect(FileManager.default.fileExists(atPath: path))
        await database.close()
        try? FileManager.default.removeItem(at: folder)
    }

    @Test func databaseArgumentPicksTheBackend() {
        #expect(DatabaseLocation(argument: "postgres://u:secret@localhost/db") == .postgres(url: "postgres://u:secret@localhost/db"))
        #expect(DatabaseLocation(argument: "postgresql://localhost/db") == .postgres(url: "postgresql://localhost/db"))
        #expect(DatabaseLocation(argument: "data/x.sqlite") == .sqlite(path: "data/x.sqlite"))
        #expect(!DatabaseLocation.postgres(url: "postgres://u:secret@localhost/db").description.contains("secret"))
    }
}
