import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

/// A pantry item as a test app spells it: its properties are the collection's fields.
struct Jar: SyncRecord, Equatable {
    static let collection = SyncCollections.pantryItems

    enum Status: String, Codable, Sendable, DatabaseValueConvertible { case inPantry, consumed, thrownAway }

    var id: String
    var name: String
    var quantity: Double
    var boughtAt: Int64
    var status: Status
    var category: String?
    var latitude: Double?
    var barcode: String?
    var productId: String?
    var description: String?
    var unit: String?
    var expiresOn: String?
    var place: String?
    var longitude: Double?
    var touchedAt: Int64?
    var finishedAt: Int64?
    var photo: String?
    var space: String?
    var changedBy: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, name, quantity, boughtAt, status, category, latitude
        case barcode, productId, description, unit, expiresOn, place, longitude, touchedAt, finishedAt, photo
        case space = "space_id", changedBy = "changed_by"
    }
}

/// A record that leaves out fields of its collection: moved, it would lose them.
private struct Lid: SyncRecord {
    static let collection = SyncCollections.pantryItems
    var id: String
    var name: String

    enum CodingKeys: String, CodingKey, CaseIterable { case id, name }
}

/// A small collection of every field type, in spaces: what a new app declares.
let memos = SyncCollection(name: "memos", app: .pantry, fields: [
    "text": SyncField(.string, nullable: false, maxLength: 200),
    "pinned": SyncField(.boolean, nullable: false),
    "rank": SyncField(.integer, nullable: false),
    "left": SyncField(.counter, nullable: false),
    "weight": SyncField(.number),
    "due": SyncField(.date),
], scope: .space)

/// A memo as a new app spells it.
struct Note: SyncRecord, Equatable {
    static let collection = memos
    var id: String
    var text: String
    var pinned: Bool
    var rank: Int64
    var left: Double
    var weight: Double?
    var due: String?
    var space: String?
    var changedBy: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, text, pinned, rank, left, weight, due
        case space = "space_id", changedBy = "changed_by"
    }
}

/// A memo with a key its collection does not have.
struct Memo: SyncRecord {
    static let collection = memos
    var id: String
    var text: String
    var pinned: Bool
    var rank: Int64
    var left: Double
    var weight: Double?
    var due: String?
    var colour: String?

    enum CodingKeys: String, CodingKey, CaseIterable { case id, text, pinned, rank, left, weight, due, colour }
}

/// The promise: a record written as a value sends exactly what changed, in the one transaction
/// with its row, whatever the change (none, one field, a nil, a counter, a counter and fields).
@Suite("Records written as values: a typed table over the mirror")
struct RecordTableTests {
    let store: LocalStore
    private let jars = RecordTable<Jar>(table: "items")

    init() throws {
        store = try LocalStore(writer: DatabaseQueue(), migrations: [itemsMigration])
    }

    private func changes() throws -> [ChangePayload] {
        try Outbox(store: store).entries().map { try JSONDecoder().decode(ChangePayload.self, from: $0.payload) }
    }

    private func jar(_ id: String) throws -> Jar? { try store.reader.read { db in try jars.record(id, db) } }

    private static let jam = Jar(id: "j1", name: "Jam \"fig\"", quantity: 2.5, boughtAt: 1_700_000_000_000, status: .inPantry,
                                 category: nil, latitude: -33.865143)

    @Test func anInsertedRecordReadsBackAsItWasAndSendsItsFieldsButNoNulls() async throws {
        try await store.write { tx in try jars.insert(Self.jam, in: tx) }
        #expect(try jar("j1") == Self.jam)
        let sent = try #require(try changes().first)
        #expect(sent.fields == ["name": .string("Jam \"fig\""), "quantity": .number(2.5), "boughtAt": .integer(1_700_000_000_000),
                                "status": .string("inPantry"), "latitude": .number(-33.865143)])
    }

    @Test func anUpdateSendsOnlyWhatChangedAndNothingWhenNothingDid() async throws {
        try await store.write { tx in try jars.insert(Self.jam, in: tx) }
        // When a field is set to the value it has, nothing is queued
        let same = try await store.write { tx in try jars.update("j1", in: tx) { $0.name = "Jam \"fig\"" } }
        #expect(try same == Self.jam && changes().count == 1)
        // When two fields change and one is cleared
        let after = try await store.write { tx in
            try jars.update("j1", in: tx) { jar in
                jar.category = "Breakfast"
                jar.status = .consumed
                jar.latitude = nil
            }
        }
        #expect(after?.category == "Breakfast" && after?.latitude == nil)
        #expect(try changes().last?.fields == ["category": .string("Breakfast"), "status": .string("consumed"), "latitude": .null])
        #expect(try jar("j1") == after)
        // And a record that is not there changes nothing and queues nothing
        let missing = try await store.write { tx in try jars.update("nope", in: tx) { $0.name = "x" } }
        #expect(try missing == nil && changes().count == 2)
    }

    @Test func aCounterIsAddedToAsADeltaWithTheOtherChangesInOneChange() async throws {
        try await store.write { tx in try jars.insert(Self.jam, in: tx) }
        let after = try await store.write { tx in
            try jars.add(-0.5, to: \.quantity, of: "j1", in: tx) { $0.category = "Opened" }
        }
        let sent = try #require(try changes().last)
        #expect(sent.deltas == ["quantity": -0.5] && sent.fields == ["category": .string("Opened")])
        #expect(try after?.quantity == 2.0 && jar("j1")?.quantity == 2.0)
        // And a counter whose value is 1 (the probe's own value) is found all the same
        try await store.write { tx in _ = try jars.update("j1", in: tx) { $0.quantity = 1 } }
        try await store.write { tx in _ = try jars.add(1, to: \.quantity, of: "j1", in: tx) }
        #expect(try changes().last?.deltas == ["quantity": 1] && jar("j1")?.quantity == 2)
    }

    @Test func aWriteTheRulesRefuseWritesAndQueuesNothing() async throws {
        try await store.write { tx in try jars.insert(Self.jam, in: tx) }
        await #expect(throws: TableMirror.Refusal.self) {
            try await store.write { tx in _ = try jars.add(-3, to: \.quantity, of: "j1", in: tx) }
        }
        await #expect(throws: TableMirror.Refusal.self) {
            try await store.write { tx in _ = try jars.update("j1", in: tx) { $0.quantity = -1 } }
        }
        // And a counter both added to and set in one change is refused, as the mirror refuses it
        await #expect(throws: TableMirror.Refusal.setAndAdded(field: "quantity")) {
            try await store.write { tx in _ = try jars.add(1, to: \.quantity, of: "j1", in: tx) { $0.quantity = 9 } }
        }
        #expect(try changes().count == 1 && jar("j1")?.quantity == 2.5)
    }

    @Test func aRecordThatLeavesOutAFieldIsRefusedAtItsTablesFirstUseAndNothingIsWritten() async throws {
        let lids = RecordTable<Lid>(table: "items")
        let refusal = await #expect(throws: RecordShapeError.self) {
            try await store.write { tx in try lids.insert(Lid(id: "l1", name: "Lid"), in: tx) }
        }
        #expect(refusal?.description.hasPrefix("Lid has no property for the field(s) barcode, boughtAt,") == true)
        let rows = try await store.reader.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM items") }
        #expect(try changes().isEmpty && rows == 0)
    }

    @Test func aTableWithoutAColumnOfTheRecordIsRefusedBeforeAnythingIsWritten() async throws {
        // Given a table made without the photo column
        let store = try LocalStore(writer: DatabaseQueue(), migrations: [LocalMigration("jars-without-photos") { db in
            try db.execute(sql: """
                CREATE TABLE jars (
                    id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', quantity REAL NOT NULL DEFAULT 0, status TEXT NOT NULL DEFAULT 'inPantry',
                    boughtAt INTEGER NOT NULL DEFAULT 0, category TEXT, unit TEXT, barcode TEXT, productId TEXT, description TEXT,
                    expiresOn TEXT, place TEXT, latitude REAL, longitude REAL, touchedAt INTEGER, finishedAt INTEGER, space_id TEXT, changed_by TEXT
                )
                """)
        }])
        // When a jar is written to it, then it is refused by name, and a read too
        let jars = RecordTable<Jar>(table: "jars")
        await #expect(throws: RecordShapeError.missingColumns(table: "jars", columns: ["photo"])) {
            try await store.write { tx in try jars.insert(Self.jam, in: tx) }
        }
        #expect(throws: RecordShapeError.missingColumns(table: "jars", columns: ["photo"])) {
            try store.reader.read { db in try jars.record("j1", db) }
        }
        #expect(try Outbox(store: store).entries().isEmpty)
    }

    @Test func aCodingKeyThatIsNoFieldIsRefusedByName() {
        #expect(throws: RecordShapeError.unknownKeys(record: "Memo", collection: "memos", keys: ["colour"])) {
            try Memo.checkKeys()
        }
    }

    @Test func aFieldThatIsAListOrAnObjectIsRefusedByName() {
        struct Odd: Encodable {
            let id = "o"
            let tags = ["a", "b"]
        }
        #expect(throws: SyncFieldsEncoder.Unsupported.self) { try SyncFieldsEncoder().fields(of: Odd()) }
        do { _ = try SyncFieldsEncoder().fields(of: Odd()) } catch { #expect("\(error)".contains("'tags'")) }
    }
}
