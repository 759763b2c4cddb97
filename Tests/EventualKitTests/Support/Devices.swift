@_exported import EventualTestSupport
import EventualAPI
import EventualServer
import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import Logging
import OpenAPIRuntime
import Testing
@testable import EventualKit

/// Bytes that read as a JPEG (its first three bytes), the rest random: the server keeps any such.
func jpeg(bytes count: Int, seed: UInt64) -> Data {
    var generator = SeededGenerator(seed: seed)
    var data = Data([0xFF, 0xD8, 0xFF])
    data.reserveCapacity(count)
    while data.count < count { data.append(UInt8.random(in: 0...255, using: &generator)) }
    return data
}

/// The pantry collection mirrored into a small table: what an app's schema looks like.
let itemsMigration = LocalMigration("test-items") { db in
    try db.execute(sql: """
        CREATE TABLE items (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL DEFAULT '',
            quantity REAL NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'inPantry',
            boughtAt INTEGER NOT NULL DEFAULT 0,
            category TEXT,
            unit TEXT,
            barcode TEXT, productId TEXT, description TEXT, expiresOn TEXT, place TEXT,
            latitude REAL, longitude REAL, touchedAt INTEGER, finishedAt INTEGER, photo TEXT,
            space_id TEXT, changed_by TEXT
        )
        """)
}

/// One item as a test reads it back.
struct Item: Equatable, Sendable, CustomStringConvertible {
    let id: String
    let name: String
    let quantity: Double
    let category: String?
    /// `inPantry`, `consumed` or `thrownAway` (nil: not asked).
    var status: String? = nil

    var description: String { "\(id.prefix(8)) \(name) ×\(quantity) [\(category ?? "-")]\(status.map { " \($0)" } ?? "")" }
}

/// A device: its own database, vault and engine, talking to `serverURL`.
final class Device: Sendable {
    let store: LocalStore
    let vault: SessionVault
    let engine: SyncEngine
    let link: ServerLink

    /// NB: the deadlines are generous unless a test is about them: on a machine busy with the
    /// fault soak beside it a request can take seconds, and the suite's time limit bounds the test.
    /// The photos of its items, kept in its folder's `attachments`; its engine uploads them when
    /// made `uploadingAttachments` (a test of the upload itself runs an engine of its own).
    let attachments: Attachments
    /// The collection its items table mirrors, as its app's version declares it.
    let collection: SyncCollection

    init(folder: URL, serverURL: URL, timeout: Duration = .seconds(30),
         timeouts: ServerLink.Timeouts = ServerLink.Timeouts(connect: .seconds(10), firstByte: .seconds(20)),
         configuration: SyncConfiguration = .fast, calls: [String: CallHandler] = [:], uploadingAttachments: Bool = false,
         migrations: [LocalMigration] = [itemsMigration], middlewares: [any ClientMiddleware] = [],
         wallClock: @escaping @Sendable () -> Int64 = { UnixMillis.now() },
         collection: SyncCollection = SyncCollections.pantryItems, app: EventualApp? = nil) throws {
        store = try LocalStore(path: folder.appendingPathComponent("store.sqlite").path, migrations: migrations, wallClock: wallClock)
        let vault = SessionVault(secrets: FileSecretStore(directory: folder.appendingPathComponent("secrets")), rounds: 100_000)
        self.vault = vault
        // NB: a device opened again (its app upgraded) goes on with the sign-in it saved.
        _ = try? vault.resume()
        self.collection = collection
        link = ServerLink(serverURL: serverURL, timeout: timeout, timeouts: timeouts, middlewares: middlewares) { vault.accessToken }
        var configuration = configuration
        configuration.app = app
        attachments = Attachments(folder: folder.appendingPathComponent("attachments"), store: store, link: link)
        engine = SyncEngine(store: store, link: link, collections: [TableMirror(collection, table: "items")],
                            calls: uploadingAttachments ? attachments.uploads.merging(calls) { _, given in given } : calls, configuration: configuration,
                            logger: Logger(label: "test-device"))
    }

    /// Adds an item locally and queues it, as an app would, in `space` (nil: the person's own).
    @discardableResult
    func add(_ name: String, quantity: Double = 1, category: String? = nil, id: String = UUID().uuidString,
             space: String? = nil) async throws -> String {
        try await store.write { tx in
            try tx.db.execute(sql: "INSERT INTO items (id, name, quantity, category, boughtAt, space_id) VALUES (?, ?, ?, ?, ?, ?)",
                              arguments: [id, name, quantity, category, 1_764_000_000_000, space])
            try tx.recordChange(SyncCollections.pantryItems, id: id, fields: [
                "name": .string(name), "quantity": .number(quantity), "category": .string(category),
                "boughtAt": .integer(1_764_000_000_000), "status": "inPantry",
            ], space: space)
        }
        return id
    }

    /// The space an item's row is in, where its changes go.
    private static func space(of id: String, _ db: GRDB.Database) throws -> String? {
        try String.fetchOne(db, sql: "SELECT space_id FROM items WHERE id = ?", arguments: [id])
    }

    func edit(_ id: String, quantity: Double? = nil, category: String? = nil) async throws {
        try await store.write { tx in
            let space = try Self.space(of: id, tx.db)
            var fields: [String: SyncValue] = [:]
            if let quantity {
                try tx.db.execute(sql: "UPDATE items SET quantity = ? WHERE id = ?", arguments: [quantity, id])
                fields["quantity"] = .number(quantity)
            }
            if let category {
                try tx.db.execute(sql: "UPDATE items SET category = ? WHERE id = ?", arguments: [category, id])
                fields["category"] = .string(category)
            }
            try tx.recordChange(SyncCollections.pantryItems, id: id, fields: fields, space: space)
        }
    }

    func rename(_ id: String, to name: String) async throws {
        try await store.write { tx in
            try tx.db.execute(sql: "UPDATE items SET name = ? WHERE id = ?", arguments: [name, id])
            try tx.recordChange(SyncCollections.pantryItems, id: id, fields: ["name": .string(name)], space: try Self.space(of: id, tx.db))
        }
    }

    /// Sets an item's brand: a field of the pantry's second version (`pantryV2`), which only an
    /// upgraded device has a column for.
    func setBrand(_ id: String, _ brand: String) async throws {
        // NB: queued as the other edits are, without the local rules: the server's refusal is what the soak settles.
        let collection = self.collection
        try await store.write { tx in
            try tx.db.execute(sql: "UPDATE items SET brand = ? WHERE id = ?", arguments: [brand, id])
            try tx.recordChange(collection, id: id, fields: ["brand": .string(brand)], space: try Self.space(of: id, tx.db))
        }
    }

    /// The brand of an item: its column on an upgraded device, else what the device keeps of it.
    func brand(of id: String) throws -> String? {
        try store.reader.read { db in
            if collection.fields["brand"] != nil {
                return try String.fetchOne(db, sql: "SELECT brand FROM items WHERE id = ?", arguments: [id])
            }
            return try String.fetchOne(db, sql: """
                SELECT json_extract(fields, '$.brand') FROM eventual_kept WHERE collection = 'pantry_items' AND record_id = ?
                """, arguments: [id])
        }
    }

    /// Uses up `amount` of an item: a delta of its quantity counter.
    func consume(_ id: String, _ amount: Double) async throws {
        try await store.write { tx in
            try tx.db.execute(sql: "UPDATE items SET quantity = quantity - ? WHERE id = ?", arguments: [amount, id])
            try tx.recordChange(SyncCollections.pantryItems, id: id, adding: ["quantity": -amount], space: try Self.space(of: id, tx.db))
        }
    }

    /// Throws an item away: it is set aside (`SyncRule.editableWhile`), and takes no edit until it is brought back.
    func throwAway(_ id: String) async throws {
        try await store.write { tx in
            try tx.db.execute(sql: "UPDATE items SET status = 'thrownAway' WHERE id = ?", arguments: [id])
            try tx.recordChange(SyncCollections.pantryItems, id: id, fields: ["status": "thrownAway"], space: try Self.space(of: id, tx.db))
        }
    }

    /// The items with their status, as the soak checks them.
    func itemsWithStatus() throws -> [Item] {
        try store.reader.read { db in
            try Row.fetchAll(db, sql: "SELECT id, name, quantity, category, status FROM items ORDER BY id").map {
                Item(id: $0["id"], name: $0["name"], quantity: $0["quantity"], category: $0["category"], status: $0["status"])
            }
        }
    }

    func delete(_ id: String) async throws {
        try await store.write { tx in
            let space = try Self.space(of: id, tx.db)
            try tx.db.execute(sql: "DELETE FROM items WHERE id = ?", arguments: [id])
            try tx.recordChange(SyncCollections.pantryItems, id: id, fields: [:], deleted: true, space: space)
        }
    }

    /// Adds an item whose photo is `prepared`, its upload queued in the same transaction, in
    /// `space` (nil: the person's own).
    @discardableResult
    func add(_ name: String, photo prepared: PreparedAttachment, quantity: Double = 1, category: String? = nil,
             id: String = UUID().uuidString, space: String? = nil) async throws -> String {
        try await store.write { tx in
            let photo = try tx.queueUpload(prepared, space: space)
            try TableMirror(SyncCollections.pantryItems, table: "items").insert(id, [
                "name": .string(name), "quantity": .number(quantity), "category": .string(category),
                "status": "inPantry", "boughtAt": 1_764_000_000_000, "photo": photo,
            ], space: space, in: tx)
        }
        return id
    }

    /// The photo an item's row refers to, if any.
    func photo(of id: String) async throws -> AttachmentReference? {
        try await store.reader.read { db in try String.fetchOne(db, sql: "SELECT photo FROM items WHERE id = ?", arguments: [id]) }
            .flatMap(AttachmentReference.init(parsing:))
    }

    func items() throws -> [Item] {
        try store.reader.read { db in
            try Row.fetchAll(db, sql: "SELECT id, name, quantity, category FROM items ORDER BY id").map {
                Item(id: $0["id"], name: $0["name"], quantity: $0["quantity"], category: $0["category"])
            }
        }
    }

    var outbox: Outbox { Outbox(store: store) }

    /// The id of the entry queued last: the change just made.
    func newestEntry() throws -> String {
        guard let entry = try outbox.entries().last else { throw TestFailure("no change is queued") }
        return entry.id
    }
}

extension SyncConfiguration {
    /// Short waits, so fault tests run quickly.
    static var fast: SyncConfiguration {
        var configuration = SyncConfiguration()
        configuration.retry = Backoff(initial: .milliseconds(20), maximum: .milliseconds(200))
        configuration.interval = .milliseconds(200)
        return configuration
    }
}

/// Makes a space called `name` owned by whoever `owner` is signed in as, with the person `member`
/// is signed in as (whose email is `memberEmail`) in it as an editor; answers the space's id.
/// NB: through the API directly: the engine's space calls have tests of their own.
/// NB: invited by username: an invitation by email waits for the address to be proven, which the
/// invitation tests of the server cover.
func shareSpace(_ name: String, owner: ServerLink, member: ServerLink, memberEmail: String) async throws -> String {
    let space = UUID().uuidString
    guard case .ok(let me) = try await member.client.getMe(),
          case .created = try await owner.client.createSpace(headers: .init(idempotencyKey: UUID().uuidString),
                                                             body: .json(.init(id: space, name: name))),
          case .accepted = try await owner.client.inviteToSpace(path: .init(spaceId: space), headers: .init(idempotencyKey: UUID().uuidString),
                                                                body: .json(.init(invitee: try me.body.json.username, role: .editor))),
          case .ok(let invitations) = try await member.client.listInvitations(),
          let invitation = try invitations.body.json.invitations.first(where: { $0.space.id == space }),
          case .ok = try await member.client.acceptInvitation(path: .init(invitationId: invitation.id),
                                                              headers: .init(idempotencyKey: UUID().uuidString))
    else { throw TestFailure("could not share \(name) between the two people") }
    return space
}

/// Registers a user through the real API and returns email and password.
func registerUser(port: Int, name: String = "user") async throws -> (email: String, password: String) {
    let suffix = UUID().uuidString.prefix(8).lowercased()
    let email = "\(name).\(suffix)@example.com", password = "pass-\(suffix)"
    let link = ServerLink(serverURL: URL(string: "http://127.0.0.1:\(port)")!, timeouts: .patient) { nil }
    let answer = try await link.client.register(body: .json(.init(username: "\(name)_\(suffix)", email: email, password: password)))
    guard case .created = answer else { throw TestFailure("register failed: \(answer)") }
    return (email, password)
}

/// Waits until `condition` holds, for at most `seconds`.
/// NB: 30 s, not less: beside the fault soak on two cores the probe's backoff and a request's
/// deadline can stretch; the suite's time limit bounds the whole test.
func eventually(_ seconds: Double = 30, _ condition: () throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return try condition()
}
