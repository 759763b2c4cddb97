import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

/// The promise: a table made from a record's collection (no `CREATE TABLE` written by hand) takes
/// a person's writes and the server's records as an app's hand-written table does.
@Suite("Tables made from their records")
struct RecordMigrationTests {
    private static let jars = RecordTable<Jar>(table: "items")
    /// The pantry's items table made from `Jar`, as the hand-written `itemsMigration` makes it.
    private static let madeItems = LocalMigration.table(for: Jar.self, named: "test-items", table: "items", indexes: [[.status, .boughtAt]])

    private static func columns(_ table: String, _ store: LocalStore) throws -> [String: (type: String, notNull: Bool, empty: String?)] {
        try store.reader.read { db in
            Dictionary(uniqueKeysWithValues: try db.columns(in: table).map { ($0.name, ($0.type, $0.isNotNull, $0.defaultValueSQL)) })
        }
    }

    @Test func aMadeTableHasAColumnOfEachFieldsTypeWithADefaultWhereItCannotBeNull() throws {
        let store = try LocalStore(writer: DatabaseQueue(), migrations: [LocalMigration.table(for: Note.self, named: "memos-1", indexes: [[.rank]])])
        let columns = try Self.columns("memos", store)
        #expect(columns.keys.sorted() == ["changed_by", "due", "id", "left", "pinned", "rank", "space_id", "text", "weight"])
        #expect(columns["text"]! == ("TEXT", true, "''") && columns["pinned"]! == ("INTEGER", true, "0"))
        #expect(columns["rank"]! == ("INTEGER", true, "0") && columns["left"]! == ("REAL", true, "0"))
        #expect(columns["weight"]! == ("REAL", false, nil) && columns["due"]! == ("TEXT", false, nil))
        #expect(columns["space_id"]! == ("TEXT", false, nil) && columns["changed_by"]! == ("TEXT", false, nil))
        let indexes = try store.reader.read { db in try db.indexes(on: "memos").map(\.name).filter { !$0.hasPrefix("sqlite_") }.sorted() }
        #expect(indexes == ["memos_by_rank", "memos_by_space"])
        try store.reader.read { db in try Note.checkShape(table: "memos", db) }
    }

    @Test func aMadeTableTakesWritesAndPullsAsTheHandWrittenOneDoes() async throws {
        let written = try LocalStore(writer: DatabaseQueue(), migrations: [itemsMigration])
        let made = try LocalStore(writer: DatabaseQueue(), migrations: [Self.madeItems])
        var results: [(records: [Jar?], changes: [ChangePayload])] = []
        for store in [written, made] {
            // Given an item written, edited and used
            let jam = Jar(id: "j1", name: "Jam", quantity: 2, boughtAt: 1_700_000_000_000, status: .inPantry, category: nil, latitude: 1.5)
            try await store.write { tx in
                try Self.jars.insert(jam, space: nil, in: tx)
                try Self.jars.update("j1", in: tx) { $0.category = "Breakfast"; $0.latitude = nil; $0.expiresOn = "2026-12-01" }
                try Self.jars.add(-0.5, to: \.quantity, of: "j1", in: tx) { $0.touchedAt = 1_700_000_100_000 }
            }
            // And the server's records pulled: a new one, and an edit of the item held back where it waits
            var waiting = PendingEdits()
            waiting.fields = ["category"]
            try await store.writer.write { [waiting] db in
                try Self.jars.mirror.apply(RemoteRecord(collection: "pantry_items", recordID: "j2", fields: [
                    "name": "Tea", "quantity": 3, "boughtAt": 1_700_000_000_001, "status": "consumed", "unit": "bags",
                ], deleted: false, hlc: "", space: "kitchen", changedBy: "bob"), pending: PendingEdits(), in: db)
                try Self.jars.mirror.apply(RemoteRecord(collection: "pantry_items", recordID: "j1", fields: [
                    "name": "Fig jam", "category": "Lunch",
                ], deleted: false, hlc: "", space: nil, changedBy: "bob"), pending: waiting, in: db)
            }
            let records = try await store.reader.read { db in try ["j1", "j2"].map { try Self.jars.record($0, db) } }
            let changes = try Outbox(store: store).entries().map { try JSONDecoder().decode(ChangePayload.self, from: $0.payload) }
            results.append((records, changes))
        }
        // Then both tables hold the same records, and queued the same changes
        #expect(results[0].records == results[1].records)
        #expect(results[1].records[0]?.name == "Fig jam" && results[1].records[0]?.category == "Breakfast")
        #expect(results[1].records[1]?.unit == "bags" && results[1].records[1]?.space == "kitchen")
        #expect(results[0].changes.map(\.fields) == results[1].changes.map(\.fields))
        #expect(results[0].changes.map(\.deltas) == results[1].changes.map(\.deltas) && results[1].changes.count == 3)
    }

    @Test func aLaterMigrationOfTheRecordAddsTheColumnsOfFieldsDeclaredSinceAndNothingElse() throws {
        // Given a device whose items table was made before photos (and places) were fields
        let early = LocalMigration("items-before-photos") { db in
            try db.execute(sql: """
                CREATE TABLE items (
                    id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL DEFAULT '', quantity REAL NOT NULL DEFAULT 0,
                    status TEXT NOT NULL DEFAULT 'inPantry', boughtAt INTEGER NOT NULL DEFAULT 0, category TEXT, unit TEXT,
                    barcode TEXT, productId TEXT, description TEXT, expiresOn TEXT, latitude REAL, longitude REAL,
                    touchedAt INTEGER, finishedAt INTEGER, space_id TEXT, changed_by TEXT
                )
                """)
        }
        let later = LocalMigration.table(for: Jar.self, named: "items-2", table: "items")
        let old = try LocalStore(writer: DatabaseQueue(), migrations: [early, later])
        // Then the later migration added the two columns, and the record fits
        #expect(try Self.columns("items", old)["photo"]! == ("TEXT", false, nil))
        try old.reader.read { db in try Jar.checkShape(table: "items", db) }
        // And on a new device, where the first made them, the later one finds nothing to add
        let new = try LocalStore(writer: DatabaseQueue(), migrations: [Self.madeItems, later])
        #expect(try Self.columns("items", new).count == Jar.CodingKeys.allCases.count)
    }

    @Test(.timeLimit(.minutes(2))) func aMadeTableSyncsThroughTheEngineWithAHandWrittenOne() async throws {
        try await withLiveServer { server, scratch in
            // Given two devices of one person: one with the hand-written table, one with the made one
            let user = try await registerUser(port: try #require(server.port))
            let written = try Device(folder: scratch.url.appendingPathComponent("a"), serverURL: server)
            let made = try Device(folder: scratch.url.appendingPathComponent("b"), serverURL: server, migrations: [Self.madeItems])
            for device in [written, made] { try await device.vault.signIn(email: user.email, password: user.password, client: device.link.client) }
            // When one adds an item and the other edits it and uses some
            let jam = Jar(id: UUIDv7.make(), name: "Jam", quantity: 2, boughtAt: 1_700_000_000_000, status: .inPantry, category: nil, latitude: nil)
            try await written.store.write { tx in try Self.jars.insert(jam, in: tx) }
            #expect(await written.engine.syncNow().sent == 1)
            #expect(await made.engine.syncNow().pulled == 1)
            try await made.store.write { tx in
                try Self.jars.add(-0.5, to: \.quantity, of: jam.id, in: tx) { $0.category = "Breakfast"; $0.expiresOn = "2026-12-01" }
            }
            #expect(await made.engine.syncNow().sent == 1)
            _ = await written.engine.syncNow()
            // Then both hold the same item
            let held = try await [written, made].asyncMap { device in
                try await device.store.reader.read { db in try Self.jars.record(jam.id, db) }
            }
            #expect(held[0]?.quantity == 1.5 && held[0]?.category == "Breakfast" && held[0]?.expiresOn == "2026-12-01")
            var mine = held[1]
            mine?.changedBy = held[0]?.changedBy   // NB: who changed it last is only known once the server's record comes back
            #expect(held[0] == mine)
        }
    }
}

private extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
