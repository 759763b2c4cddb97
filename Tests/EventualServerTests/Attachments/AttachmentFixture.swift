import Crypto
import EventualAPI
import EventualStorage
import Foundation
import Logging
import NIOCore
import SQLKit
import Testing
@testable import EventualServer

/// A database with three people (alice, bob, carol), each with a personal space, and alice's
/// shared space "Home" where bob is an editor and carol a viewer; an attachment store on it.
struct AttachmentFixture: Sendable {
    let database: Database
    let store: AttachmentStore
    let home = "home-space"

    static let alice = "alice-id", bob = "bob-id", carol = "carol-id"

    /// Runs `body` with a fixture on a fresh database of `backend`, removed afterwards.
    static func with(_ backend: Backend, limits: AttachmentLimits = AttachmentLimits(),
                     _ body: @Sendable (AttachmentFixture) async throws -> Void) async throws {
        let scratch = try await ScratchDatabase.make(backend)
        let database = try await Database.open(scratch.location, logger: Logger(label: "test"))
        do {
            let fixture = AttachmentFixture(database: database, store: AttachmentStore(database: database, limits: limits))
            try await fixture.makePeople()
            try await body(fixture)
            await database.close()
            await scratch.remove()
        } catch {
            await database.close()
            await scratch.remove()
            throw error
        }
    }

    private func makePeople() async throws {
        let now = UnixMillis.now()
        try await database.transaction { [home] sql in
            for id in [Self.alice, Self.bob, Self.carol] {
                try await sql.insert(into: "users")
                    .columns("id", "username", "username_key", "email", "email_key", "password_hash", "created_at", "updated_at")
                    .values(SQLBind(id), SQLBind(id), SQLBind(id), SQLBind("\(id)@example.com"), SQLBind("\(id)@example.com"),
                            SQLBind("x"), SQLBind(now), SQLBind(now))
                    .run()
                try await SpaceGate.openPersonalSpace(of: id, now: now, on: sql)
            }
            _ = try await SpaceStore(database: database).create(id: home, name: "Home", by: Self.alice, now: now, on: sql)
            for (id, role) in [(Self.bob, "editor"), (Self.carol, "viewer")] {
                try await sql.insert(into: "space_members").columns("space_id", "user_id", "role", "added_at")
                    .values(SQLBind(home), SQLBind(id), SQLBind(role), SQLBind(now)).run()
            }
        }
    }

    /// Begins and sends `bytes` in chunks of `chunk` bytes, answering the last status.
    @discardableResult
    func upload(_ bytes: [UInt8], chunk: Int = 1_048_576, in space: String? = nil, by userID: String = alice,
                sha256: String? = nil, byteQuota: Int64 = .max) async throws -> AttachmentStatus {
        let digest = sha256 ?? Self.sha256(bytes)
        let space = space ?? userID
        var status = try await store.begin(digest, size: Int64(bytes.count), in: space, by: userID, byteQuota: byteQuota,
                                           now: UnixMillis.now())
        while !status.complete {
            let end = min(bytes.count, Int(status.received) + chunk)
            status = try await store.append(ByteBuffer(bytes: bytes[Int(status.received)..<end]), at: status.received, to: digest,
                                            in: space, by: userID, byteQuota: byteQuota, now: UnixMillis.now())
        }
        return status
    }

    /// Every byte a download of the blob sends.
    func download(_ sha256: String, in space: String, by userID: String, range: String? = nil) async throws -> [UInt8] {
        let content = try await store.content(of: sha256, in: space, for: userID, range: range)
        var bytes: [UInt8] = []
        for try await piece in content.bytes { bytes += piece }
        #expect(Int64(bytes.count) == content.bytes.count)
        return bytes
    }

    /// The bytes `userID` stores, as the quota counts them.
    func usage(of userID: String) async throws -> Int64 {
        try await database.withConnection { sql in
            try await sql.select().column("bytes").from("storage_usage").where("user_id", .equal, userID).first()?
                .decode(column: "bytes", as: Int64.self) ?? 0
        }
    }

    /// The rows the blob (or upload) leaves in the database: its own and its chunks'.
    func storedRows(_ sha256: String) async throws -> Int {
        try await database.withConnection { sql in
            let blobs = try await sql.select().column("sha256").from("attachments").where("sha256", .equal, sha256).all().count
            let chunks = try await sql.select().column("sha256").from("attachment_chunks").where("sha256", .equal, sha256).all().count
            return blobs + chunks
        }
    }

    /// A synced record of the space whose `photo` field holds `value`, written as a push stores it.
    func record(_ recordID: String, in space: String, photo value: SyncValue, deleted: Bool = false) async throws {
        var state = SyncRecordState()
        let stamp = HLCStamp(millis: UnixMillis.now(), counter: 0, node: "test")
        state.fields = ["name": "Receipt", "photo": value]
        state.stamps = ["name": stamp, "photo": stamp]
        if deleted { state.tombstone = HLCStamp(millis: UnixMillis.now() + 1, counter: 0, node: "test") }
        let columns = try state.columns()
        try await database.withConnection { sql in
            let seq = try await sql.raw("SELECT COUNT(*) AS n FROM sync_records").first()?.decode(column: "n", as: Int64.self) ?? 0
            try await sql.insert(into: "sync_records")
                .columns("space_id", "collection", "record_id", "fields", "field_stamps", "tombstone", "seq", "updated_at")
                .values(SQLBind(space), SQLBind("transactions"), SQLBind(recordID), SQLBind(columns.fields), SQLBind(columns.fieldStamps),
                        SQLBind(columns.tombstone), SQLBind(seq + 1), SQLBind(UnixMillis.now()))
                .run()
        }
    }

    func deleteRecords(in space: String) async throws {
        try await database.withConnection { sql in
            try await sql.delete(from: "sync_records").where("space_id", .equal, space).run()
        }
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        AttachmentReference(digest: SHA256.hash(data: bytes)).sha256
    }

    /// `count` bytes that start as a JPEG does, the rest from a seeded generator.
    static func jpeg(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var bytes = [UInt8](repeating: 0, count: count)
        for index in bytes.indices {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            bytes[index] = UInt8(truncatingIfNeeded: state)
        }
        for (index, byte) in [UInt8]([0xFF, 0xD8, 0xFF, 0xE0]).enumerated() where index < count { bytes[index] = byte }
        return bytes
    }
}

/// Runs `body` expecting it to throw `expected`.
func expectRefusal<Value>(_ expected: (Refusal) -> Bool, sourceLocation: SourceLocation = #_sourceLocation,
                          _ body: () async throws -> Value) async {
    do {
        _ = try await body()
        Issue.record("expected a refusal, got none", sourceLocation: sourceLocation)
    } catch let refusal as Refusal {
        #expect(expected(refusal), "\(refusal)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected a refusal, got \(error)", sourceLocation: sourceLocation)
    }
}
