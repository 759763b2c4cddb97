import EventualAPI
import GRDB

/// The engine's own tables, in every user's database, and its small key-value state.
enum EngineSchema {
    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("eventual-engine-1") { db in
            try db.execute(sql: """
                CREATE TABLE eventual_outbox (
                    position INTEGER PRIMARY KEY AUTOINCREMENT,
                    id TEXT NOT NULL UNIQUE,
                    kind TEXT NOT NULL CHECK (kind IN ('change', 'call')),
                    operation TEXT NOT NULL,
                    record_id TEXT,
                    payload BLOB NOT NULL,
                    coalescing_key TEXT,
                    created_at INTEGER NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER NOT NULL DEFAULT 0,
                    last_error TEXT,
                    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'inFlight', 'failed'))
                );
                CREATE INDEX eventual_outbox_due ON eventual_outbox (state, next_attempt_at, position);
                CREATE INDEX eventual_outbox_by_record ON eventual_outbox (operation, record_id) WHERE record_id IS NOT NULL;
                CREATE INDEX eventual_outbox_by_coalescing_key ON eventual_outbox (coalescing_key) WHERE coalescing_key IS NOT NULL;
                CREATE TABLE eventual_state (
                    key TEXT PRIMARY KEY,
                    value TEXT NOT NULL
                );
                CREATE TABLE eventual_cache (
                    key TEXT PRIMARY KEY,
                    body BLOB NOT NULL,
                    etag TEXT,
                    fetched_at INTEGER NOT NULL
                );
                """)
        }
        AnalyticsTable.register(in: &migrator)
        migrator.registerMigration("eventual-engine-2-spaces") { db in
            // NB: an entry's space: a change's (NULL: the person's own), or the space a space call is about.
            try db.execute(sql: """
                ALTER TABLE eventual_outbox ADD COLUMN space TEXT;
                CREATE INDEX eventual_outbox_by_space ON eventual_outbox (space) WHERE space IS NOT NULL;
                -- Space calls go among the changes, in the outbox's order: found without reading the changes.
                CREATE INDEX eventual_outbox_waiting_calls ON eventual_outbox (position) WHERE kind = 'call' AND state = 'pending';
                CREATE TABLE eventual_spaces (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    role TEXT NOT NULL,
                    owner TEXT
                );
                """)
        }
        migrator.registerMigration("eventual-engine-3-rejections") { db in
            // NB: what the server said of a change it refused by a rule: the rule's code, the field,
            // and its own record then (JSON, a pulled record's shape; NULL when it holds none).
            try db.execute(sql: """
                ALTER TABLE eventual_outbox ADD COLUMN rejection_code TEXT;
                ALTER TABLE eventual_outbox ADD COLUMN rejection_field TEXT;
                ALTER TABLE eventual_outbox ADD COLUMN server_record BLOB;
                """)
        }
        migrator.registerMigration("eventual-engine-4-creations") { db in
            // NB: a change that made its record on this device: refused, it tells that the server
            // never had the record (its id was made here), whatever the refusal says.
            try db.execute(sql: "ALTER TABLE eventual_outbox ADD COLUMN creates_record INTEGER NOT NULL DEFAULT 0")
        }
        SubscriptionTable.register(in: &migrator)
        AttachmentTable.register(in: &migrator)
        migrator.registerMigration("eventual-engine-7-space-apps") { db in
            // NB: the app whose records a shared space holds (NULL: a personal space, or one no app claimed yet).
            try db.execute(sql: "ALTER TABLE eventual_spaces ADD COLUMN app TEXT")
        }
        migrator.registerMigration("eventual-engine-8-space-members") { db in
            // NB: who is in a shared space, as the last pull said (JSON of `[SpaceMember]`; NULL: not heard yet).
            try db.execute(sql: "ALTER TABLE eventual_spaces ADD COLUMN members TEXT")
        }
        ServerClockTable.register(in: &migrator)
        ServerHistory.register(in: &migrator)
        NewerAppWait.register(in: &migrator)
        KeptFields.register(in: &migrator)
    }

    enum Key: String {
        /// `pullCursor`: the one cursor of a device from before subscriptions (`SubscriptionTable` takes it over).
        /// `keptGap`: the fields each mirrored collection declared when this device began keeping
        /// (`KeptFields.gap`), absent when it kept from its first pull.
        case node, lastStamp, pullCursor, lastSyncAt, keptGap
    }

    static func value(_ key: Key, _ db: Database) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM eventual_state WHERE key = ?", arguments: [key.rawValue])
    }

    static func setValue(_ value: String?, for key: Key, _ db: Database) throws {
        if let value {
            try db.execute(sql: "INSERT INTO eventual_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                           arguments: [key.rawValue, value])
        } else {
            try db.execute(sql: "DELETE FROM eventual_state WHERE key = ?", arguments: [key.rawValue])
        }
    }

    /// This device's node id (made on first use), the newest stamp it issued and the server's
    /// clock minus this device's as last learned (stamps resume from it, trusted or not).
    static func clockState(_ db: Database) throws -> (node: String, lastStamp: HLCStamp?, serverOffset: Int64?) {
        let node: String
        if let stored = try value(.node, db) {
            node = stored
        } else {
            node = String(UUIDv7.make().replacingOccurrences(of: "-", with: "").suffix(12))
            try setValue(node, for: .node, db)
        }
        return (node, try value(.lastStamp, db).flatMap(HLCStamp.init(parsing:)), try ServerClockTable.saved(db)?.offsetMs)
    }

    static func saveLastStamp(_ stamp: HLCStamp, _ db: Database) throws {
        try setValue(stamp.description, for: .lastStamp, db)
    }
}
