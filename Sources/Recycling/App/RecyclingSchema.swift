import EventualKit
import GRDB

/// The tables of SustainU on a device. Migrations are append-only.
enum RecyclingSchema {
    static let migrations: [LocalMigration] = [
        LocalMigration("sustainu v1") { db in
            // The server's recycling points, replaced whole when its ETag changes.
            try db.execute(sql: """
                CREATE TABLE recycling_points (
                    id TEXT PRIMARY KEY,
                    name TEXT,
                    latitude REAL NOT NULL,
                    longitude REAL NOT NULL,
                    kind TEXT NOT NULL,
                    materials TEXT NOT NULL,
                    opening_hours TEXT,
                    operator TEXT,
                    description TEXT,
                    visits INTEGER NOT NULL DEFAULT 0
                ) STRICT
                """)
            // The packaging catalogue: a barcode (GTIN-14) to the parts of its packaging, as JSON.
            try db.execute(sql: "CREATE TABLE packaging (gtin TEXT PRIMARY KEY, parts TEXT NOT NULL) STRICT")
            // When each catalogue (points, packaging) was fetched, with its ETag or version.
            try db.execute(sql: """
                CREATE TABLE catalogues (
                    name TEXT PRIMARY KEY,
                    etag TEXT,
                    version INTEGER,
                    fetched_at INTEGER NOT NULL
                ) STRICT
                """)
            // Every scan made on this device. `outbox_id` is the queued call that sends it; the
            // result columns are filled by the server's answer; `guess_*` is the device's own
            // answer from the packaging catalogue, shown until then. `announced` is 0 for a
            // result the person has not been told of yet.
            try db.execute(sql: """
                CREATE TABLE scans (
                    id TEXT PRIMARY KEY,
                    taken_at INTEGER NOT NULL,
                    time_zone TEXT NOT NULL,
                    barcode TEXT,
                    photo_file TEXT,
                    point_id TEXT,
                    latitude REAL,
                    longitude REAL,
                    outbox_id TEXT NOT NULL,
                    guess_trash_type TEXT,
                    detected INTEGER,
                    trash_type TEXT,
                    bin TEXT,
                    bin_label TEXT,
                    special_point TEXT,
                    points INTEGER,
                    source TEXT,
                    message TEXT,
                    answered_at INTEGER,
                    announced INTEGER NOT NULL DEFAULT 1
                ) STRICT
                """)
            try db.execute(sql: "CREATE INDEX scans_by_time ON scans (taken_at)")
            try db.execute(sql: "CREATE INDEX scans_to_announce ON scans (announced) WHERE announced = 0")
        },
        LocalMigration("sustainu v2: the parts of a scanned product's packaging") { db in
            // JSON [PackagingPart]: the server's answer, or while waiting the packaging catalogue's.
            try db.execute(sql: "ALTER TABLE scans ADD COLUMN parts TEXT")
        },
        LocalMigration("sustainu v3: the scanned product's name") { db in
            // The knowledge base's name for the scanned barcode, when the server knows the product.
            try db.execute(sql: "ALTER TABLE scans ADD COLUMN product_name TEXT")
        },
        LocalMigration("sustainu v4: how far this device's clock was off and when that was learned; what it learned of the server") { db in
            // One row: the server's time minus this device's (ms), and this device's time then.
            // NB: the moment lets a later process tell a recent offset from one the clock's
            // correction since made stale (see ScanClock).
            try db.execute(sql: """
                CREATE TABLE device_clock (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    offset_ms INTEGER NOT NULL,
                    learned_at INTEGER NOT NULL
                ) STRICT
                """)
            // What this device learned of the server, by name: "recycling.photosUnclassified" is 1
            // once the server said it cannot classify photos (0 once it classified one).
            try db.execute(sql: "CREATE TABLE device_facts (key TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT")
        },
        LocalMigration("sustainu v5: the engine keeps how far this device's clock is off") { db in
            // NB: a device upgraded within the hour keeps trusting the offset it learned (`DeviceClock`).
            if let row = try Row.fetchOne(db, sql: "SELECT offset_ms, learned_at FROM device_clock WHERE id = 1") {
                try DeviceClock.carryOver(offset: row["offset_ms"], learnedAt: row["learned_at"], db)
            }
            try db.execute(sql: "DROP TABLE device_clock")
        },
        LocalMigration("sustainu v6: the special-waste point's id and how far it was") { db in
            // NB: its title alone named no point `sustainu point` could look up. The distance is
            // from where the scan was taken (NULL when it had no position); scans answered
            // before keep their title only.
            try db.execute(sql: "ALTER TABLE scans ADD COLUMN special_point_id TEXT")
            try db.execute(sql: "ALTER TABLE scans ADD COLUMN special_point_meters REAL")
        },
    ]
}
