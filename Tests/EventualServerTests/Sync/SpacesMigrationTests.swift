import EventualStorage
import Foundation
import HummingbirdTesting
import Logging
import SQLKit
import Testing
@testable import EventualServer

@Suite("Sync: the spaces migration keeps every record, counter and device's place", .timeLimit(.minutes(3)))
struct SpacesMigrationTests {
    @Test(arguments: Backend.available)
    func recordsOfADatabaseFromBeforeSpacesAreEachPersonsPersonalSpaceAndOldCursorsGoOn(_ backend: Backend) async throws {
        let scratch = try await ScratchDatabase.make(backend)
        do {
            // Given two people's records as a server before spaces stored them (the tables rebuilt as
            // migrations 2 and 4 made them, the rows copied back with user_id for space_id)
            let (alice, bob, stored) = try await serve(scratch.location) { api in
                let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
                for id in ["a1", "a2", "a3"] {
                    _ = try await api.pushed([SyncChangeJSON(recordId: id, hlc: Stamps.at(-5000), fields: pantryItem(["name": .string(id)]))], as: alice)
                }
                _ = try await api.pushed([SyncChangeJSON(recordId: "b1", hlc: Stamps.at(-5000), fields: pantryItem())], as: bob)
                _ = try await api.pushed([SyncChangeJSON(recordId: "b1", hlc: Stamps.at(-4000), deltas: ["quantity": 2])], as: bob)
                let stored = try await api.pulledAll(as: alice).records.merging(try await api.pulledAll(as: bob).records) { $1 }
                return (alice, bob, stored)
            }
            try await Self.rewindToBeforeSpaces(scratch.location)

            // When a server with spaces starts on it
            try await serve(scratch.location) { api in
                // Then a device's cursor of digits goes on from where it was, in the person's personal space
                let page = try await api.spacePull(since: "2", as: alice)
                #expect(page.changes.map(\.recordId) == ["a3"])
                #expect(page.changes.first.map { [$0.space, $0.changedBy] } == [alice.id, alice.username])
                #expect(page.spaces.map { [$0.id, $0.kind, $0.role] } == [[alice.id, "personal", "owner"]])
                // And every record is there, merged state and all, each in its person's space
                let alices = try await api.pulledAll(as: alice).records
                let bobs = try await api.pulledAll(as: bob).records
                #expect(Set(alices.keys) == ["\(alice.id)/a1", "\(alice.id)/a2", "\(alice.id)/a3"])
                #expect(Set(bobs.keys) == ["\(bob.id)/b1"])
                #expect(alices.merging(bobs) { $1 } == stored)
                #expect(bobs["\(bob.id)/b1"]?.fields["quantity"] == 3)
                // And the counter went on: a new change comes after the old ones
                _ = try await api.pushed([SyncChangeJSON(recordId: "a4", hlc: Stamps.at(-1000), fields: pantryItem())], as: alice)
                #expect(try await api.spacePull(since: "3", as: alice).changes.map(\.recordId) == ["a4"])
                // And each person has their personal space, named and owned
                #expect(try await api.spaces(as: bob).map { [$0.id, $0.name, $0.owner] } == [[bob.id, "Personal", bob.username]])
            }
        } catch {
            await scratch.remove()
            throw error
        }
        await scratch.remove()
    }

    private func serve<Value: Sendable>(_ location: DatabaseLocation, _ test: @Sendable (API) async throws -> Value) async throws -> Value {
        let app = try await buildApplication(testConfiguration(location))
        return try await app.test(.router) { client in try await test(API(client: client)) }
    }

    /// Puts the sync tables back as they were before migration 11, keeping their rows, and
    /// forgets that 11 ran.
    private static func rewindToBeforeSpaces(_ location: DatabaseLocation) async throws {
        let database = try await Database.open(location, logger: Logger(label: "test"))
        do {
            try await database.transaction { sql in
                let records = try await sql.raw("""
                    SELECT space_id, collection, record_id, fields, field_stamps, counter_deltas, tombstone, seq, updated_at FROM sync_records
                    """).all()
                let counters = try await sql.raw("SELECT space_id, last_seq FROM sync_counters").all()
                // NB: and the attachments (migration 13), whose rows name spaces, the history of commits (16)
                // and the deployed apps (17), made again as every migration from 11 on runs again.
                for table in ["deployed_apps", "sync_history", "attachment_chunks", "attachments", "sync_records", "sync_counters", "space_invitations", "space_members", "spaces"] {
                    try await sql.raw("DROP TABLE \(ident: table)").run()
                }
                let before = Migration.all[1].statements.prefix(3) + Migration.all[3].statements
                for statement in before { try await sql.raw(SQLQueryString(statement)).run() }
                for row in records {
                    try await sql.insert(into: "sync_records")
                        .columns("user_id", "collection", "record_id", "fields", "field_stamps", "counter_deltas", "tombstone", "seq", "updated_at")
                        .values(SQLBind(try row.decode(column: "space_id", as: String.self)),
                                SQLBind(try row.decode(column: "collection", as: String.self)),
                                SQLBind(try row.decode(column: "record_id", as: String.self)),
                                SQLBind(try row.decode(column: "fields", as: String.self)),
                                SQLBind(try row.decode(column: "field_stamps", as: String.self)),
                                SQLBind(try row.decode(column: "counter_deltas", as: String?.self)),
                                SQLBind(try row.decode(column: "tombstone", as: String?.self)),
                                SQLBind(try row.decode(column: "seq", as: Int64.self)),
                                SQLBind(try row.decode(column: "updated_at", as: Int64.self)))
                        .run()
                }
                for row in counters {
                    try await sql.insert(into: "sync_counters").columns("user_id", "last_seq")
                        .values(SQLBind(try row.decode(column: "space_id", as: String.self)),
                                SQLBind(try row.decode(column: "last_seq", as: Int64.self)))
                        .run()
                }
                // NB: every migration from spaces on runs again.
                try await sql.delete(from: "schema_migrations").where("version", .greaterThanOrEqual, 11).run()
            }
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }
}
