import EventualAPI
import GRDB

/// What this device last learned of the server's time, kept for the next process: the server's
/// time minus this device's (ms), and this device's time then.
struct SavedServerClock: Sendable, Equatable, Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "eventual_server_clock"
    var id = 1
    let offsetMs: Int64
    let learnedAt: Int64

    enum CodingKeys: String, CodingKey {
        case id, offsetMs = "offset_ms", learnedAt = "learned_at"
    }
}

/// `eventual_server_clock`: one row, written when an answer tells the server's time.
enum ServerClockTable {
    /// A saved offset is written again when it moved by more than the `Date` header's precision,
    /// or when it is older than this: its moment must stay recent for the next process to trust it.
    static let refreshAfter: Int64 = 60_000

    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("eventual-engine-10-server-clock") { db in
            // NB: the moment it was learned lets a later process tell a recent offset from one the
            // device clock's correction since made stale (`DeviceClock`). The offset kept before,
            // without its moment, moves here as learned long ago: stamps resume from it, as they
            // did, but `DeviceClock` does not trust it.
            try db.execute(sql: """
                CREATE TABLE eventual_server_clock (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    offset_ms INTEGER NOT NULL,
                    learned_at INTEGER NOT NULL
                ) STRICT;
                INSERT INTO eventual_server_clock (id, offset_ms, learned_at)
                    SELECT 1, CAST(value AS INTEGER), 0 FROM eventual_state WHERE key = 'serverClockOffset';
                DELETE FROM eventual_state WHERE key = 'serverClockOffset';
                """)
        }
    }

    static func saved(_ db: Database) throws -> SavedServerClock? {
        try SavedServerClock.fetchOne(db, key: 1)
    }

    static func save(offset: Int64, learnedAt: Int64, _ db: Database) throws {
        try SavedServerClock(offsetMs: offset, learnedAt: learnedAt).save(db)
    }

    /// Whether an offset learned at `wall` says more than the saved one: it moved, the saved one
    /// is getting old, or the device clock was set back since.
    static func isWorthSaving(_ offset: Int64, at wall: Int64, over saved: SavedServerClock?) -> Bool {
        guard let saved else { return true }
        return abs(saved.offsetMs - offset) > 1_000 || !(0..<refreshAfter).contains(wall - saved.learnedAt)
    }
}
