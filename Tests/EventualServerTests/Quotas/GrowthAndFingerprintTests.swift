import EventualAPI
import Crypto
import Foundation
import Logging
import SQLKit
import Testing
@testable import EventualServer

@Suite("Idempotency fingerprints, quotas and purges", .timeLimit(.minutes(2)))
struct GrowthAndFingerprintTests {
    @Test(arguments: Backend.available)
    func aRegistrationFingerprintIsNotAPlainHashOfThePassword(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let body = #"{"email":"fp@example.com","password":"fingerprinted","username":"fp_user"}"#
            let answer = try await api.send(.post, "/users", headers: [.init("Idempotency-Key")!: "fp-1"], json: body)
            #expect(answer.status == .created)
            let database = try await Database.open(location, logger: Logger(label: "test"))
            let rows = try await database.withConnection { sql in
                try await sql.select().columns("scope", "request_hash").from("idempotency_keys").all()
            }
            await database.close()
            let row = try #require(rows.first)
            let stored = try row.decode(column: "request_hash", as: String.self)
            let scope = try row.decode(column: "scope", as: String.self)
            // The old fingerprint, SHA-256 of the sorted-keys JSON, is not what is stored
            let plain = Hex.encode(SHA256.hash(data: Data(body.utf8)))
            #expect(stored != plain)
            #expect(stored.count == 64)
            // And the scope names no email in clear
            #expect(!scope.contains("fp@example.com"))
        }
    }

    @Test(arguments: Backend.available)
    func twoStrangersWithTheSameKeyDoNotCollide(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let first = try await api.register(username: "stranger1", email: "stranger1@example.com", key: "my-first-key")
            let second = try await api.register(username: "stranger2", email: "stranger2@example.com", key: "my-first-key")
            #expect(first.status == .created)
            #expect(second.status == .created, "\(second.text)")
            #expect(try first.decode(UserJSON.self).id != second.decode(UserJSON.self).id)
        }
    }

    @Test(arguments: Backend.available)
    func aSyncRecordPastTheQuotaIsRejectedAloneWithCodeQuotaAndAClearMessage(_ backend: Backend) async throws {
        try await withServer(backend, configure: { $0.quotas.syncRecordsPerUser = 3 }) { api in
            // Given a person who stores three records, the most allowed
            let account = try await api.signUp()
            let three = (0..<3).map { SyncChangeJSON(recordId: "item-\($0)", hlc: Stamps.at(-1000), fields: pantryItem()) }
            #expect(try await api.pushed(three, as: account).map(\.status) == ["applied", "applied", "applied"])
            // When they push a new record with an edit of an existing one
            let results = try await api.pushed([
                SyncChangeJSON(recordId: "item-3", hlc: Stamps.at(-1000), fields: pantryItem()),
                SyncChangeJSON(recordId: "item-0", hlc: Stamps.at(-500), fields: ["name": "Edited"]),
            ], as: account)
            // Then the push is answered (200), the new record alone rejected with code quota, saying whose quota it is
            #expect(results.map(\.status) == ["rejected", "applied"])
            #expect(results[0].code == "quota")
            let message = try #require(results[0].message)
            #expect(message.contains("Quota reached: you store 3 synced records") && message.contains("at most 3"), "\(message)")
            // And the edit went, the refused record is not stored
            let stored = try await api.pulledRecords(as: account)
            #expect(stored.keys.sorted() == ["item-0", "item-1", "item-2"])
            #expect(stored["item-0"]?.fields["name"] == "Edited")
            // And another user is unaffected
            let other = try await api.signUp()
            #expect(try await api.pushed([SyncChangeJSON(recordId: "x", hlc: Stamps.at(-1000), fields: pantryItem())], as: other)
                .map(\.status) == ["applied"])
        }
    }

    @Test(arguments: Backend.available)
    func productsPastTheQuotaAreA413(_ backend: Backend) async throws {
        try await withServer(backend, configure: { $0.quotas.productsPerUser = 2 }) { api in
            let account = try await api.signUp()
            _ = try await api.createProduct(Barcodes.unique(), name: "One", as: account)
            _ = try await api.createProduct(Barcodes.unique(), name: "Two", as: account)
            let barcode = Barcodes.unique()
            let token = try await api.sessionToken(barcode, as: account)
            let third = try await api.postProduct(barcode, name: "Three", token: token, as: account)
            #expect(third.status == .contentTooLarge)
            #expect(try third.error().message.contains("Quota"))
        }
    }

    @Test(arguments: Backend.available)
    func aSyncChangePastTheByteQuotaIsRejectedAloneAndShrinkingFreesRoom(_ backend: Backend) async throws {
        // NB: 4,000 bytes hold two records of a 1,500-byte description (plus their stamps), not three.
        try await withServer(backend, configure: { $0.quotas.bytesPerUser = 4_000 }) { api in
            let account = try await api.signUp()
            let long = String(repeating: "é", count: 750)  // 1,500 bytes in UTF-8
            func item(_ id: String, _ description: String, _ age: Int64) -> SyncChangeJSON {
                SyncChangeJSON(recordId: id, hlc: Stamps.at(age), fields: pantryItem(["description": .string(description)]))
            }
            #expect(try await api.pushed([item("a", long, -3000), item("b", long, -3000)], as: account).map(\.status) == ["applied", "applied"])
            // When a third such record comes with a small one
            let results = try await api.pushed([item("c", long, -3000), item("d", "Oat", -3000)], as: account)
            // Then the third alone is rejected with code quota and a message naming the quota, and the small one fits
            #expect(results.map(\.status) == ["rejected", "applied"])
            #expect(results[0].code == "quota")
            let message = try #require(results[0].message)
            // (its sizes as the device says them: 4,000 bytes is "4 KiB", not "0.0 MiB")
            #expect(message.contains("Quota") && message.contains("at most 4 KiB") && message.contains("for you"), "\(message)")
            // And nothing of it was stored: a pull has a, b and d
            #expect(try await api.pulledRecords(as: account).keys.sorted() == ["a", "b", "d"])
            // Shrinking records always goes through, and frees room for the third
            #expect(try await api.pushed([item("a", "Oat", -2000), item("b", "Oat", -2000)], as: account).map(\.status)
                == ["applied", "applied"])
            #expect(try await api.pushed([item("c", long, -1000)], as: account).map(\.status) == ["applied"])
            // Another user has a quota of their own
            let other = try await api.signUp()
            #expect(try await api.pushed([item("x", long, -1000), item("y", long, -1000)], as: other).map(\.status) == ["applied", "applied"])
        }
    }

    @Test(arguments: Backend.available)
    func productBytesCountTowardsTheQuotaAndDeletingFreesThem(_ backend: Backend) async throws {
        try await withServer(backend, configure: { $0.quotas.bytesPerUser = 3_000 }) { api in
            let account = try await api.signUp()
            let description = String(repeating: "Ingredients: oats, water. ", count: 70)  // 1,820 bytes
            func post(_ barcode: String) async throws -> Answer {
                let token = try await api.sessionToken(barcode, as: account)
                return try await api.postProduct(barcode, name: "Oat drink", token: token, as: account, description: description)
            }
            let first = try await post(Barcodes.unique())
            #expect(first.status == .created, "\(first.text)")
            let secondBarcode = Barcodes.unique()
            let second = try await post(secondBarcode)
            #expect(second.status == .contentTooLarge, "\(second.text)")
            #expect(try second.error().message.contains("Quota"))
            #expect(try await api.products(secondBarcode, as: account).isEmpty)
            // Deleting the first product frees its bytes
            let id = try first.decode(ProductJSON.self).id
            #expect(try await api.send(.delete, "/products/\(id)", headers: account.bearer).status == .ok)
            #expect(try await post(secondBarcode).status == .created)
        }
    }

    @Test(arguments: Backend.available)
    func appliedChangeIDsOlderThanTheRetentionArePurged(_ backend: Backend) async throws {
        let scratch = try await ScratchDatabase.make(backend)
        let database = try await Database.open(scratch.location, logger: Logger(label: "test"))
        let now = UnixMillis.now()
        let day: Int64 = 24 * 3600 * 1000
        try await database.withConnection { sql in
            try await sql.insert(into: "users")
                .columns("id", "username", "username_key", "email", "email_key", "password_hash", "created_at", "updated_at")
                .values(SQLBind("u1"), SQLBind("u1"), SQLBind("u1"), SQLBind("u1@example.com"), SQLBind("u1@example.com"),
                        SQLBind("x"), SQLBind(now), SQLBind(now))
                .run()
            try await sql.insert(into: "sync_applied_changes").columns("user_id", "change_id", "applied_at")
                .values(SQLBind("u1"), SQLBind("old"), SQLBind(now - 31 * day))
                .values(SQLBind("u1"), SQLBind("recent"), SQLBind(now - 29 * day))
                .run()
            // And hours of filed usage events: one the day's limit still counts, one it no longer does
            try await sql.insert(into: "analytics_filing").columns("user_id", "hour_bucket", "events")
                .values(SQLBind("u1"), SQLBind(now / 3_600_000 - 25), SQLBind(Int64(500)))
                .values(SQLBind("u1"), SQLBind(now / 3_600_000 - 2), SQLBind(Int64(500)))
                .run()
        }
        let key = Data(repeating: 7, count: 32)
        let housekeeping = Housekeeping(database: database, idempotency: Idempotency(database: database, fingerprintKey: key),
                                        throttle: Throttle(database: database, limits: ThrottleLimits(), keyBytes: key),
                                        appliedChangeRetention: .seconds(30 * 24 * 3600), logger: Logger(label: "test"))
        try await housekeeping.sweep(now: now)
        let left = try await database.withConnection { sql in
            try await sql.select().column("change_id").from("sync_applied_changes").all().map { try $0.decode(column: "change_id", as: String.self) }
        }
        #expect(left == ["recent"])
        let hours = try await database.withConnection { sql in
            try await sql.select().column("hour_bucket").from("analytics_filing").all().map { try $0.decode(column: "hour_bucket", as: Int64.self) }
        }
        #expect(hours == [now / 3_600_000 - 2])
        await database.close()
        await scratch.remove()
    }
}
