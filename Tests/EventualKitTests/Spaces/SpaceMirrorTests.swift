import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

@Suite("Spaces on one device: the mirror's space columns, the outbox's space, the known spaces")
struct SpaceMirrorTests {
    let store: LocalStore
    let mirror = TableMirror(SyncCollections.pantryItems, table: "items")

    init() throws {
        store = try LocalStore(writer: DatabaseQueue(), migrations: [itemsMigration])
    }

    func row(_ id: String) throws -> Row? {
        try store.reader.read { db in try Row.fetchOne(db, sql: "SELECT * FROM items WHERE id = ?", arguments: [id]) }
    }

    func entries() throws -> [OutboxEntry] { try Outbox(store: store).entries() }

    /// Ann's spaces on this device, with no server.
    func spaces() -> Spaces {
        Spaces(store: store, username: "ann", client: ServerLink(serverURL: URL(string: "http://127.0.0.1:9")!) { nil }.client,
               patience: .seconds(1))
    }

    /// The spaces a pull's page names: the person's own (`me`) and a household.
    func knowSpaces() async throws {
        try await store.writer.write { db in
            try SpaceTable.replace(with: [
                .init(id: "me", name: "Personal", kind: .personal, role: .owner, owner: "ann"),
                .init(id: "home", name: "Home", kind: .shared, role: .editor, owner: "bob"),
            ], db: db)
        }
    }

    // MARK: - A person's changes

    @Test func aSpaceItsInvitationAndTheRowsMovedIntoItCommitTogetherOrNotAtAll() async throws {
        try await knowSpaces()
        try await store.write { tx in try mirror.insert("tea", ["name": "Tea", "quantity": 1, "status": "inPantry"], in: tx) }
        // When an app's one transaction creates a space, invites Bob and moves the tea into it, then fails
        await #expect(throws: TestFailure.self) {
            try await store.write { tx in
                let flat = try spaces().create(name: "Flat", in: tx)
                try spaces().invite("bob", toSpaceID: flat, in: tx)
                try mirror.delete("tea", in: tx)
                try mirror.insert("tea", ["name": "Tea", "quantity": 1, "status": "inPantry"], space: flat, in: tx)
                throw TestFailure("the app failed half-way")
            }
        }
        // Then nothing of it is left
        #expect(try spaces().list().map(\.name) == ["Personal", "Home"])
        #expect(try entries().count == 1 && row("tea")?["space_id"] as String? == nil)
        // And when it succeeds, the space call, the invitation and the move wait in that order
        let flat = try await store.write { tx in
            let flat = try spaces().create(name: "Flat", in: tx)
            try spaces().invite("bob", toSpaceID: flat, in: tx)
            try mirror.delete("tea", in: tx)
            try mirror.insert("tea", ["name": "Tea", "quantity": 1, "status": "inPantry"], space: flat, in: tx)
            return flat
        }
        #expect(try entries().dropFirst().map(\.operation) == ["spaces.create", "spaces.invite", "pantry_items", "pantry_items"])
        #expect(try row("tea")?["space_id"] as String? == flat)
        // And a space the person does not share cannot be invited to
        await #expect(throws: SpaceError.personalSpace) {
            try await store.write { tx in try spaces().invite("bob", toSpaceID: "me", in: tx) }
        }
    }

    @Test func anItemPutInASpaceKeepsItInItsRowAndItsChange() async throws {
        try await store.write { tx in try mirror.insert("a", ["name": "Milk", "quantity": 3], space: "home", in: tx) }
        #expect(try row("a")?["space_id"] as String? == "home")
        #expect(try entries().map(\.space) == ["home"])
    }

    @Test func editsAndDeletesGoToTheSpaceTheRowIsIn() async throws {
        try await store.write { tx in
            try mirror.insert("a", ["name": "Milk", "quantity": 3], space: "home", in: tx)
            try mirror.insert("b", ["name": "Tea", "quantity": 1], in: tx)
        }
        try await store.write { tx in
            try mirror.update("a", adding: ["quantity": -1], in: tx)
            try mirror.update("b", setting: ["name": "Green tea"], in: tx)
            try mirror.delete("a", in: tx)
        }
        #expect(try entries().map(\.space) == ["home", nil, "home", nil, "home"])
    }

    @Test func thePersonsOwnSpaceNamedByItsIdIsKeptAsNoSpace() async throws {
        try await knowSpaces()
        try await store.write { tx in try mirror.insert("a", ["name": "Milk"], space: "me", in: tx) }
        #expect(try row("a")?["space_id"] as String? == nil)
        #expect(try entries().map(\.space) == [nil])
    }

    @Test func aCollectionOfOnePersonsRecordsRefusesASpace() async throws {
        await #expect(throws: LocalStoreError.notInSpaces(collection: "spending_limits")) {
            try await store.write { tx in
                try tx.recordChange(SyncCollections.spendingLimits, id: "l", fields: ["period": "weekly"], space: "home")
            }
        }
        #expect(try entries().isEmpty)
    }

    @Test func aChangeToAnItemMarksItChangedHereUntilTheServerSaysWhoChangedItLast() async throws {
        try await store.writer.write { db in
            try mirror.apply(remote("a", ["name": "Milk", "quantity": 3], space: "home", by: "bob"), pending: PendingEdits(), in: db)
        }
        #expect(try row("a")?["changed_by"] as String? == "bob")
        try await store.write { tx in try mirror.update("a", adding: ["quantity": -1], in: tx) }
        #expect(try row("a")?["changed_by"] as String? == nil)
    }

    // MARK: - The server's state

    @Test func aPulledRecordWritesItsSpaceAndWhoChangedItLast() async throws {
        try await store.writer.write { db in
            try mirror.apply(remote("a", ["name": "Milk"], space: "home", by: "bob"), pending: PendingEdits(), in: db)
            try mirror.apply(remote("b", ["name": "Tea"], space: nil, by: "ann"), pending: PendingEdits(), in: db)
        }
        #expect(try row("a")?["space_id"] as String? == "home" && row("a")?["changed_by"] as String? == "bob")
        #expect(try row("b")?["space_id"] as String? == nil && row("b")?["changed_by"] as String? == "ann")
    }

    @Test func aRecordMovedToAnotherSpaceSurvivesTheTombstoneOfTheOneItLeftInEitherOrder() async throws {
        // Given an item moved from Home to the person's own space: a tombstone in Home, the record in the other
        for tombstoneFirst in [true, false] {
            try await store.writer.write { db in
                try db.execute(sql: "DELETE FROM items")
                try mirror.apply(remote("a", ["name": "Milk"], space: "home", by: "bob"), pending: PendingEdits(), in: db)
                let tombstone = remote("a", [:], space: "home", by: "bob", deleted: true)
                let moved = remote("a", ["name": "Milk"], space: nil, by: "ann")
                for record in tombstoneFirst ? [tombstone, moved] : [moved, tombstone] {
                    try mirror.apply(record, pending: PendingEdits(), in: db)
                }
            }
            // Then the item is in the person's own space, whichever came first
            #expect(try row("a")?["space_id"] as String? == nil, "tombstone first: \(tombstoneFirst)")
        }
    }

    @Test func leavingASpaceDeletesItsRowsOnlyAndFailsItsWaitingChanges() async throws {
        try await store.write { tx in
            try mirror.insert("a", ["name": "Milk"], space: "home", in: tx)
            try mirror.insert("b", ["name": "Tea"], in: tx)
        }
        let failed = try await store.writer.write { db in
            try mirror.deleteRecords(inSpace: "home", in: db)
            return try OutboxTable.failChanges(in: "home", message: "You are no longer a member of Home", db: db)
        }
        #expect(try row("a") == nil && row("b") != nil)
        #expect(failed.count == 1)
        let states = try entries().map { "\($0.space ?? "own") \($0.state) \($0.lastError ?? "")" }
        #expect(states == ["home failed You are no longer a member of Home", "own pending "])
    }

    // MARK: - The wire

    @Test func aChangeNamesItsSpaceOnTheWireAndAChangeToThePersonsOwnSendsNone() async throws {
        try await store.write { tx in
            try mirror.insert("a", ["name": "Milk"], space: "home", in: tx)
            try mirror.insert("b", ["name": "Tea"], in: tx)
        }
        let body = try JSONSerialization.jsonObject(with: SyncWire.pushBody(try entries())) as? [String: Any]
        let changes = try #require(body?["changes"] as? [[String: Any]])
        #expect(changes[0]["space"] as? String == "home" && changes[0]["recordId"] as? String == "a")
        #expect(changes[1]["space"] == nil && changes[1]["recordId"] as? String == "b")
    }

    @Test func aPageFromAServerBeforeSpacesReadsAsThePersonsOwn() throws {
        let body = #"{"changes":[{"collection":"pantry_items","recordId":"a","fields":{"name":"Milk"},"deleted":false,"hlc":"h"}],"cursor":"7","hasMore":false}"#
        let page = try JSONDecoder().decode(SyncWire.PulledPage.self, from: Data(body.utf8))
        #expect(page.spaces == nil && page.removed == nil)
        #expect(page.changes[0].remote(personalSpace: page.personalSpace).space == nil)
    }

    @Test func aPulledRecordOfThePersonsOwnSpaceHasNoSpaceHere() throws {
        let body = #"""
            {"changes":[{"collection":"pantry_items","recordId":"a","fields":{},"deleted":false,"hlc":"h","space":"u1","changedBy":"ann"},
                        {"collection":"pantry_items","recordId":"b","fields":{},"deleted":false,"hlc":"h","space":"home","changedBy":null}],
             "cursor":"s1.x","hasMore":false,
             "spaces":[{"id":"u1","name":"Personal","kind":"personal","role":"owner"},{"id":"home","name":"Home","kind":"shared","role":"viewer"}],
             "removed":[]}
            """#
        let page = try JSONDecoder().decode(SyncWire.PulledPage.self, from: Data(body.utf8))
        let records = page.changes.map { $0.remote(personalSpace: page.personalSpace) }
        #expect(records.map(\.space) == [nil, "home"])
        #expect(records.map(\.changedBy) == ["ann", nil])
    }

    // MARK: - The spaces this device knows

    @Test func thePagesSpacesReplaceTheKnownOnesButASpaceCreatedHereStaysUntilTheServerHasIt() async throws {
        try await knowSpaces()
        let spaces = self.spaces()
        let created = try await spaces.create(name: "  Allotment ")
        // When a page says only the person's own space
        try await store.writer.write { db in
            try SpaceTable.replace(with: [.init(id: "me", name: "Personal", kind: .personal, role: .owner, owner: nil)], db: db)
        }
        // Then Home is gone, the new space (not sent yet) stays, the owner heard before is kept
        #expect(try spaces.list() == [
            Space(id: "me", name: "Personal", kind: .personal, role: .owner, owner: "ann"),
            Space(id: created, name: "Allotment", kind: .shared, role: .owner, owner: "ann"),
        ])
        #expect(try entries().map { "\($0.operation) \($0.space ?? "-")" } == ["spaces.create \(created)"])
    }

    @Test func aSpaceIsNamedByItsIdOrItsNameAndThePersonsOwnIsNeverLeft() async throws {
        try await knowSpaces()
        let spaces = self.spaces()
        #expect(try spaces.space("HOME").id == "home")
        #expect(throws: SpaceError.unknownSpace("Cottage")) { try spaces.space("Cottage") }
        await #expect(throws: SpaceError.personalSpace) { try await spaces.leave("me") }
        await #expect(throws: SpaceError.roleNotInvitable(.owner)) { try await spaces.invite("bob", to: "home", role: .owner) }
        await #expect(throws: SpaceError.badName("")) { try await spaces.create(name: "") }
        await #expect(throws: SpaceError.badName(String(repeating: "x", count: 61))) {
            try await spaces.create(name: String(repeating: "x", count: 61))
        }
        #expect(try entries().isEmpty)
    }

    @Test func spaceCallsWaitingAreSaidInPeoplesWords() async throws {
        try await knowSpaces()
        // Ann owns Home, as the server last said, and Bob is in it
        try await store.writer.write { db in
            try SpaceTable.upsert(SpaceDetails(id: "home", name: "Home", kind: .shared, role: .owner, owner: "ann", members: [
                SpaceMember(username: "ann", role: .owner, since: Date(timeIntervalSince1970: 0)),
                SpaceMember(username: "bob", role: .viewer, since: Date(timeIntervalSince1970: 0)),
            ]), db: db)
        }
        let spaces = self.spaces()
        let created = try await spaces.create(name: "Allotment")
        try await spaces.invite("bob@example.com", to: "Home", role: .viewer)
        try await spaces.setRole(.editor, of: "bob", in: "home")
        try await spaces.remove("bob", from: "home")
        try await spaces.accept("0197a3c4-0000-7000-8000-000000000001")
        try await spaces.leave(created)
        let lines = try entries().map { try SpaceCall.summary(of: $0, username: "ann", store: store) }
        #expect(lines == [
            "new space Allotment", "invitation of bob@example.com to Home as viewer", "bob made editor of Home",
            "removal of bob from Home", "acceptance of an invitation", "leaving Allotment",
        ])
    }

    @Test func aRoleOrKindANewerServerAddsReadsAsTheLeastOne() async throws {
        let page = #"{"id":"x","name":"X","kind":"club","role":"commenter"}"#
        let pulled = try JSONDecoder().decode(SpaceSummary.self, from: Data(page.utf8))
        try await store.writer.write { db in try SpaceTable.replace(with: [pulled], db: db) }
        let space = try #require(try spaces().list().first)
        #expect(space.role == .viewer && space.kind == .shared)
    }

    @Test func aRoleOrKindAnEarlierVersionKeptAsTheServerSpeltItReadsAsTheLeastOne() async throws {
        try await store.writer.write { db in
            try db.execute(sql: "INSERT INTO eventual_spaces (id, name, kind, role) VALUES ('x', 'X', 'club', 'commenter')")
        }
        let space = try #require(try spaces().list().first)
        #expect(space.role == .viewer && space.kind == .shared)
    }

    func remote(_ id: String, _ fields: [String: SyncValue], space: String?, by: String?, deleted: Bool = false) -> RemoteRecord {
        RemoteRecord(collection: "pantry_items", recordID: id, fields: fields, deleted: deleted, hlc: "1764000000000-00000-server",
                     space: space, changedBy: by)
    }
}
