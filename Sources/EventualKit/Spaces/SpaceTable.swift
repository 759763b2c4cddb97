import EventualAPI
import Foundation
import GRDB

/// The spaces the person is in, as this device knows them (`eventual_spaces`), used inside the
/// caller's transaction.
enum SpaceTable {
    /// Replaces the spaces with a page's, keeping those created on this device that the server
    /// has not heard of yet.
    static func replace(with spaces: [SpaceSummary], db: Database) throws {
        let ids = spaces.map(\.id)
        try db.execute(sql: """
            DELETE FROM eventual_spaces WHERE id NOT IN (\(OutboxTable.placeholders(ids.count)))
            AND id NOT IN (SELECT space FROM eventual_outbox WHERE kind = 'call' AND operation = ? AND state != 'failed')
            """, arguments: StatementArguments(ids) + [SpaceCall.create.rawValue])
        for space in spaces {
            try db.cachedStatement(sql: """
                INSERT INTO eventual_spaces (id, name, kind, role, owner, app, members) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET name = excluded.name, kind = excluded.kind, role = excluded.role,
                    owner = COALESCE(excluded.owner, owner), app = COALESCE(excluded.app, app),
                    members = COALESCE(excluded.members, members)
                """).execute(arguments: [space.id, space.name, space.kind, space.role, space.owner, space.app,
                                         try space.members.map(membersJSON)])
        }
    }

    /// A space created on this device, its creator its owner.
    static func insertCreated(id: String, name: String, owner: String, app: String?, db: Database) throws {
        try db.execute(sql: "INSERT INTO eventual_spaces (id, name, kind, role, owner, app) VALUES (?, ?, 'shared', 'owner', ?, ?)",
                       arguments: [id, name, owner, app])
    }

    /// A space as the server last said it (joined, created, a role changed).
    static func upsert(_ space: SpaceDetails, db: Database) throws {
        try db.execute(sql: """
            INSERT INTO eventual_spaces (id, name, kind, role, owner, app, members) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, kind = excluded.kind, role = excluded.role, owner = excluded.owner,
                app = COALESCE(excluded.app, app), members = excluded.members
            """, arguments: [space.id, space.name, space.kind, space.role, space.owner, space.app, try membersJSON(space.members)])
    }

    /// Takes in the owners and the person's roles the server says now, of the spaces this device knows.
    static func update(from spaces: [SpaceDetails], db: Database) throws {
        for space in spaces {
            try db.execute(sql: "UPDATE eventual_spaces SET name = ?, role = ?, owner = ?, members = ? WHERE id = ?",
                           arguments: [space.name, space.role, space.owner, try membersJSON(space.members), space.id])
        }
    }

    /// Members as the `members` column keeps them.
    static func membersJSON(_ members: [SpaceMember]) throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return String(decoding: try encoder.encode(members), as: UTF8.self)
    }

    /// The spaces `app` sees (nil: every one): its own, the personal one, and those no app claimed yet.
    static func all(of app: String? = nil, _ db: Database) throws -> [Space] {
        try Space.fetchAll(db, sql: """
            SELECT * FROM eventual_spaces WHERE ? IS NULL OR kind = 'personal' OR app IS NULL OR app = ?
            ORDER BY kind = 'shared', name, id
            """, arguments: [app, app])
    }

    static func space(_ id: String, _ db: Database) throws -> Space? {
        try Space.fetchOne(db, sql: "SELECT * FROM eventual_spaces WHERE id = ?", arguments: [id])
    }

    /// Whether `id` is the person's own space.
    static func isPersonal(_ id: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM eventual_spaces WHERE id = ? AND kind = 'personal')",
                          arguments: [id]) ?? false
    }
}
