import EventualAPI
import Foundation
import GRDB

/// The waiting usage events' SQL, in the same database as the outbox but apart from it: events
/// are bounded and may be dropped (counted), a user's changes never are.
enum AnalyticsTable {
    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("eventual-analytics-1") { db in
            try db.execute(sql: """
                CREATE TABLE eventual_events (
                    position INTEGER PRIMARY KEY AUTOINCREMENT,
                    id TEXT NOT NULL UNIQUE,
                    name TEXT NOT NULL,
                    properties BLOB NOT NULL,
                    at INTEGER NOT NULL,
                    app TEXT NOT NULL,
                    app_version TEXT NOT NULL,
                    platform TEXT NOT NULL,
                    session_id TEXT NOT NULL
                );
                CREATE INDEX eventual_events_by_time ON eventual_events (at);
                CREATE TABLE eventual_event_tallies (
                    key TEXT PRIMARY KEY,
                    value INTEGER NOT NULL
                );
                """)
        }
    }

    /// What the tallies count.
    enum Tally: String {
        /// Events dropped unsent (too many waiting, or too old).
        case dropped
        /// Of those, how many the server has been told of (an `events_dropped` event).
        case droppedReported
        /// Events the server refused (never sent again).
        case rejected
    }

    static func insert(_ row: AnalyticsRow, db: Database) throws {
        try db.execute(sql: """
            INSERT INTO eventual_events (id, name, properties, at, app, app_version, platform, session_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [row.id, row.name, row.properties, row.at, row.app, row.appVersion, row.platform, row.sessionID])
    }

    /// Drops the oldest events past `maxWaiting` and those recorded before `oldest`, and counts them.
    @discardableResult
    static func prune(maxWaiting: Int, oldest: Int64, db: Database) throws -> Int {
        try db.execute(sql: "DELETE FROM eventual_events WHERE at < ?", arguments: [oldest])
        var dropped = db.changesCount
        let waiting = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM eventual_events") ?? 0
        if waiting > maxWaiting {
            try db.execute(sql: """
                DELETE FROM eventual_events WHERE position IN (SELECT position FROM eventual_events ORDER BY position LIMIT ?)
                """, arguments: [waiting - maxWaiting])
            dropped += db.changesCount
        }
        if dropped > 0 { try add(dropped, to: .dropped, db: db) }
        return dropped
    }

    /// The oldest waiting events, at most `limit` and about `maxBytes` of properties.
    static func oldest(limit: Int, maxBytes: Int, db: Database) throws -> [AnalyticsRow] {
        var rows: [AnalyticsRow] = []
        var bytes = 0
        for row in try Row.fetchAll(db, sql: "SELECT * FROM eventual_events ORDER BY position LIMIT ?", arguments: [limit]) {
            let event = AnalyticsRow(row: row)
            if !rows.isEmpty, bytes + event.properties.count > maxBytes { break }
            bytes += event.properties.count + 250
            rows.append(event)
        }
        return rows
    }

    static func remove(ids: [String], db: Database) throws {
        for chunk in ids.chunked(into: 500) {
            try db.execute(sql: "DELETE FROM eventual_events WHERE id IN (\(OutboxTable.placeholders(chunk.count)))",
                           arguments: StatementArguments(chunk))
        }
    }

    static func waiting(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM eventual_events") ?? 0
    }

    static func tally(_ key: Tally, db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT value FROM eventual_event_tallies WHERE key = ?", arguments: [key.rawValue]) ?? 0
    }

    static func add(_ amount: Int, to key: Tally, db: Database) throws {
        try db.execute(sql: """
            INSERT INTO eventual_event_tallies (key, value) VALUES (?, ?)
            ON CONFLICT (key) DO UPDATE SET value = value + excluded.value
            """, arguments: [key.rawValue, amount])
    }
}

/// One waiting event as stored.
struct AnalyticsRow: Sendable, Equatable {
    let id: String
    let name: String
    /// A JSON object, keys sorted.
    let properties: Data
    let at: Int64
    let app: String
    let appVersion: String
    let platform: String
    let sessionID: String

    init(id: String, name: String, properties: Data, at: Int64, app: String, appVersion: String, platform: String, sessionID: String) {
        self.id = id
        self.name = name
        self.properties = properties
        self.at = at
        self.app = app
        self.appVersion = appVersion
        self.platform = platform
        self.sessionID = sessionID
    }

    init(row: Row) {
        self.init(id: row["id"], name: row["name"], properties: row["properties"], at: row["at"], app: row["app"],
                  appVersion: row["app_version"], platform: row["platform"], sessionID: row["session_id"])
    }
}
