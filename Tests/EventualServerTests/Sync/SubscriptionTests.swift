import EventualAPI
import EventualStorage
import Foundation
import HummingbirdTesting
import Logging
import SQLKit
import Testing
@testable import EventualServer

@Suite("Sync: a pull names its collections, counts what remains, sends no deletion to a new device, and old deletions are purged",
       .timeLimit(.minutes(3)))
struct SubscriptionTests {
    @Test(arguments: Backend.available)
    func aPullGetsOnlyTheCollectionsItNames(_ backend: Backend) async throws {
        try await serving(backend) { api, _ in
            // Given a person with pantry items and SpendiQ budgets
            let alice = try await api.signUp("alice")
            _ = try await api.pushed((1...3).map { SyncChangeJSON(recordId: "item\($0)", hlc: Stamps.at(-5000), fields: pantryItem()) }, as: alice)
            _ = try await api.pushed([SyncChangeJSON(collection: "spending_limits", recordId: "limit1", hlc: Stamps.at(-5000),
                                                     fields: ["period": "monthly", "category": "", "currency": "EUR", "amountMinor": 50_000])],
                                     as: alice)
            // When the pantry pulls its collection, and SpendiQ its own
            let pantry = try await api.subscribed(["pantry_items"], as: alice)
            let spending = try await api.subscribed(["spending_accounts", "spending_transactions", "spending_limits"], as: alice)
            // Then neither gets the other's records; a pull naming none (an older device) gets all
            #expect(Set(pantry.changes.map(\.collection)) == ["pantry_items"])
            #expect(pantry.changes.count == 3)
            #expect(spending.changes.map(\.recordId) == ["limit1"])
            #expect(try await api.subscribed(nil, as: alice).changes.count == 4)
            // And a malformed name or slice is a 400 with a message, never a 500
            for bad in ["pantry items", "pantry_items:touchedAt=>5", "pantry_items:1field>=3", "pantry_items:touchedAt>="] {
                let answer = try await api.rawPull("collection=" + bad.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, as: alice)
                #expect(answer.status == .badRequest, "\(bad): \(answer.text)")
                #expect(answer.text.contains("collection must be"), "\(bad): \(answer.text)")
            }
        }
    }

    @Test(arguments: Backend.available)
    func twoSlicesOfOneBoundSplitACollectionWithNothingLeftOverOrTwice(_ backend: Backend) async throws {
        try await serving(backend) { api, _ in
            let alice = try await api.signUp("alice")
            // Given items touched at 10, 20, 30, one never touched, and one whose field is text
            var changes = [10, 20, 30].map { SyncChangeJSON(recordId: "t\($0)", hlc: Stamps.at(-5000), fields: pantryItem(["touchedAt": .integer(Int64($0))])) }
            changes.append(SyncChangeJSON(recordId: "never", hlc: Stamps.at(-5000), fields: pantryItem()))
            _ = try await api.pushed(changes, as: alice)
            // When one pull takes touchedAt >= 20 and another the rest
            let recent = try await api.subscribed(["pantry_items:touchedAt>=20"], as: alice)
            let rest = try await api.subscribed(["pantry_items:touchedAt<20"], as: alice)
            // Then each record is in exactly one
            #expect(Set(recent.changes.map(\.recordId)) == ["t20", "t30"])
            #expect(Set(rest.changes.map(\.recordId)) == ["t10", "never"])
            // And a record whose field changes moves: the slice it now belongs to sends it after its cursor
            _ = try await api.pushed([SyncChangeJSON(recordId: "t10", hlc: Stamps.at(-4000), fields: ["touchedAt": 25])], as: alice)
            let moved = try await api.subscribed(["pantry_items:touchedAt>=20"], since: recent.cursor, as: alice)
            #expect(moved.changes.map(\.recordId) == ["t10"])
            #expect(try await api.subscribed(["pantry_items:touchedAt<20"], since: rest.cursor, as: alice).changes.isEmpty)
        }
    }

    @Test(arguments: Backend.available)
    func aFirstPullSendsNoDeletedRecordButADeletionAfterItBeganComes(_ backend: Backend) async throws {
        try await serving(backend) { api, _ in
            let alice = try await api.signUp("alice")
            // Given three items, one of them deleted
            _ = try await api.pushed(["a", "b", "c"].map { SyncChangeJSON(recordId: $0, hlc: Stamps.at(-5000), fields: pantryItem()) }, as: alice)
            _ = try await api.pushed([SyncChangeJSON(recordId: "b", hlc: Stamps.at(-4000), deleted: true)], as: alice)
            // When a new device pulls from nothing, a page of one at a time
            let first = try await api.subscribed(["pantry_items"], limit: 1, as: alice)
            #expect(first.changes.map(\.recordId) == ["a"])
            // And "a" is deleted while it pulls
            _ = try await api.pushed([SyncChangeJSON(recordId: "a", hlc: Stamps.at(-3000), deleted: true)], as: alice)
            var cursor = first.cursor
            var later: [SpaceRecordJSON] = []
            while true {
                let page = try await api.subscribed(["pantry_items"], since: cursor, limit: 1, as: alice)
                later += page.changes
                cursor = page.cursor
                if !page.hasMore { break }
            }
            // Then "b", deleted before it began, never comes; "a"'s deletion, after it received "a", does
            #expect(later.map(\.recordId) == ["c", "a"])
            #expect(later.map(\.deleted) == [false, true])
            // And a device that holds records and asks from the beginning (`s1`) gets every deletion
            let everything = try await api.subscribed(["pantry_items"], since: "s1", as: alice)
            #expect(Set(everything.changes.filter(\.deleted).map(\.recordId)) == ["a", "b"])
        }
    }

    @Test(arguments: Backend.available)
    func aCountedPullSaysHowManyRecordsRemain(_ backend: Backend) async throws {
        try await serving(backend) { api, _ in
            let alice = try await api.signUp("alice")
            _ = try await api.pushed((1...25).map { SyncChangeJSON(recordId: "r\($0)", hlc: Stamps.at(-5000), fields: pantryItem()) }, as: alice)
            var remaining: [Int?] = []
            var cursor: String?
            repeat {
                let page = try await api.subscribed(["pantry_items"], since: cursor, limit: 10, count: true, as: alice)
                remaining.append(page.remaining)
                cursor = page.cursor
                if !page.hasMore { break }
            } while true
            #expect(remaining == [15, 5, 0])
            // And without `count` there is no count
            #expect(try await api.subscribed(["pantry_items"], limit: 10, as: alice).remaining == nil)
        }
    }

    @Test(arguments: Backend.available)
    func purgedDeletionsFreeTheQuotaAndACursorFromBeforeThemIsToldToStartOver(_ backend: Backend) async throws {
        let scratch = try await ScratchDatabase.make(backend)
        do {
            // Given a device that pulled two items, then one of them deleted
            let (alice, before, stale) = try await serve(scratch.location) { api in
                let alice = try await api.signUp("alice")
                _ = try await api.pushed(["keep", "gone"].map { SyncChangeJSON(recordId: $0, hlc: Stamps.at(-5000), fields: pantryItem()) },
                                         as: alice)
                let stale = try await api.subscribed(["pantry_items"], as: alice).cursor
                _ = try await api.pushed([SyncChangeJSON(recordId: "gone", hlc: Stamps.at(-4000), deleted: true)], as: alice)
                return (alice, try await Self.stored(at: scratch.location), stale)
            }
            // When housekeeping purges the deletions older than the retention (all of them, here)
            let purged = try await RecyclingData.withDatabase(scratch.location) { database in
                try await SyncStore(database: database).purgeDeletedRecords(before: UnixMillis.now() + 60_000)
            }
            #expect(purged == 1)
            // Then the record and its bytes no longer count
            let after = try await Self.stored(at: scratch.location)
            #expect(after.records == before.records - 1)
            #expect(after.bytes < before.bytes)
            try await serve(scratch.location) { api in
                // And a device whose cursor missed the deletion is told to start over (410, with a message)
                let answer = try await api.rawPull("since=\(stale)&collection=pantry_items", as: alice)
                #expect(answer.status == .gone, "\(answer.text)")
                #expect(answer.text.contains("start over"), "\(answer.text)")
                // And a first pull gets what is alive, and its cursor goes on
                let fresh = try await api.subscribed(["pantry_items"], as: alice)
                #expect(fresh.changes.map(\.recordId) == ["keep"])
                _ = try await api.pushed([SyncChangeJSON(recordId: "new", hlc: Stamps.at(-1000), fields: pantryItem())], as: alice)
                #expect(try await api.subscribed(["pantry_items"], since: fresh.cursor, as: alice).changes.map(\.recordId) == ["new"])
            }
        } catch {
            await scratch.remove()
            throw error
        }
        await scratch.remove()
    }

    @Test(arguments: Backend.available)
    func recordsWrittenBeforeTheMigrationAreClassifiedAndOnlyTheDeletedArePurged(_ backend: Backend) async throws {
        let scratch = try await ScratchDatabase.make(backend)
        do {
            // Given a deleted record and one deleted then brought back by a later edit, as migration
            // 12 leaves rows with a tombstone (`deleted` unknown)
            try await serve(scratch.location) { api in
                let alice = try await api.signUp("alice")
                _ = try await api.pushed(["dead", "back"].map { SyncChangeJSON(recordId: $0, hlc: Stamps.at(-5000), fields: pantryItem()) },
                                         as: alice)
                _ = try await api.pushed(["dead", "back"].map { SyncChangeJSON(recordId: $0, hlc: Stamps.at(-4000), deleted: true) }, as: alice)
                _ = try await api.pushed([SyncChangeJSON(recordId: "back", hlc: Stamps.at(-3000), fields: ["name": "Back again"])], as: alice)
            }
            try await RecyclingData.withDatabase(scratch.location) { database in
                try await database.withConnection { sql in
                    try await sql.raw("UPDATE sync_records SET deleted = NULL WHERE tombstone IS NOT NULL").run()
                }
                // When housekeeping runs
                _ = try await SyncStore(database: database).purgeDeletedRecords(before: UnixMillis.now() + 60_000)
                // Then the deleted one is gone and the one brought back stays, alive
                let rows = try await database.withConnection { sql in
                    try await sql.raw("SELECT record_id, deleted FROM sync_records ORDER BY record_id").all()
                        .map { [try $0.decode(column: "record_id", as: String.self): try $0.decode(column: "deleted", as: Int?.self)] }
                }
                #expect(rows == [["back": 0]])
            }
        } catch {
            await scratch.remove()
            throw error
        }
        await scratch.remove()
    }

    // MARK: - Helpers

    private func serving(_ backend: Backend, _ test: @Sendable (API, DatabaseLocation) async throws -> Void) async throws {
        let scratch = try await ScratchDatabase.make(backend)
        do {
            try await serve(scratch.location) { api in try await test(api, scratch.location) }
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

    /// How many synced records are stored, and the bytes counted against their owners.
    private static func stored(at location: DatabaseLocation) async throws -> (records: Int, bytes: Int64) {
        try await RecyclingData.withDatabase(location) { database in
            try await database.withConnection { sql in
                let records = try await sql.raw("SELECT COUNT(*) AS n FROM sync_records").first()!.decode(column: "n", as: Int.self)
                let bytes = try await sql.raw("SELECT CAST(COALESCE(SUM(bytes), 0) AS BIGINT) AS n FROM storage_usage").first()!.decode(column: "n", as: Int64.self)
                return (records, bytes)
            }
        }
    }
}

/// A pull's page with its count.
struct SubscribedPullJSON: Decodable {
    let changes: [SpaceRecordJSON]
    let cursor: String
    let hasMore: Bool
    let remaining: Int?
}

extension API {
    func rawPull(_ query: String, as account: Account) async throws -> Answer {
        try await send(.get, "/v1/sync/pull?" + query, headers: account.bearer)
    }

    /// One page of a pull that names `collections` (nil: none), requiring a 200.
    func subscribed(_ collections: [String]?, since: String? = nil, limit: Int? = nil, count: Bool = false, as account: Account,
                    sourceLocation: SourceLocation = #_sourceLocation) async throws -> SubscribedPullJSON {
        var items = (collections ?? []).map { URLQueryItem(name: "collection", value: $0) }
        if let since { items.append(URLQueryItem(name: "since", value: since)) }
        if let limit { items.append(URLQueryItem(name: "limit", value: String(limit))) }
        if count { items.append(URLQueryItem(name: "count", value: "true")) }
        var components = URLComponents()
        components.queryItems = items
        let answer = try await rawPull(components.percentEncodedQuery ?? "", as: account)
        try #require(answer.status == .ok, "pull: \(answer.text)", sourceLocation: sourceLocation)
        return try answer.decode(SubscribedPullJSON.self, sourceLocation: sourceLocation)
    }
}
