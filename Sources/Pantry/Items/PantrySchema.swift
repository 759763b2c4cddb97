import EventualAPI
import EventualKit
import GRDB

/// The pantry's tables in the user's database. Append only: a shipped migration is never edited.
enum PantrySchema {
    /// The table that mirrors the synced `pantry_items` collection.
    static let itemsTable = "pantry_items"
    /// Items, written and read as `PantryItem`s; its mirror writes the server's changes.
    static let items = RecordTable<PantryItem>(table: itemsTable)

    static let migrations: [LocalMigration] = [
        LocalMigration("pantry-1-items") { db in
            try db.execute(sql: """
                CREATE TABLE pantry_items (
                    id TEXT PRIMARY KEY NOT NULL,
                    barcode TEXT,
                    productId TEXT,
                    name TEXT NOT NULL DEFAULT '',
                    description TEXT,
                    quantity REAL NOT NULL DEFAULT 1,
                    unit TEXT,
                    category TEXT,
                    expiresOn TEXT,
                    boughtAt INTEGER NOT NULL DEFAULT 0,
                    place TEXT,
                    latitude REAL,
                    longitude REAL,
                    status TEXT NOT NULL DEFAULT 'inPantry',
                    touchedAt INTEGER,
                    finishedAt INTEGER
                );
                CREATE INDEX pantry_items_by_expiry ON pantry_items (status, expiresOn);
                CREATE INDEX pantry_items_by_barcode ON pantry_items (barcode);
                CREATE VIRTUAL TABLE pantry_items_fts USING fts5(
                    name, description, category, place,
                    content = 'pantry_items', content_rowid = 'rowid',
                    tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'
                );
                -- Only items in the pantry are indexed: search never filters through the ones that left.
                CREATE TRIGGER pantry_items_fts_insert AFTER INSERT ON pantry_items WHEN new.status = 'inPantry' BEGIN
                    INSERT INTO pantry_items_fts (rowid, name, description, category, place)
                    VALUES (new.rowid, new.name, new.description, new.category, new.place);
                END;
                CREATE TRIGGER pantry_items_fts_delete AFTER DELETE ON pantry_items WHEN old.status = 'inPantry' BEGIN
                    INSERT INTO pantry_items_fts (pantry_items_fts, rowid, name, description, category, place)
                    VALUES ('delete', old.rowid, old.name, old.description, old.category, old.place);
                END;
                -- NB: one trigger, so the old entry always leaves before the new one enters.
                CREATE TRIGGER pantry_items_fts_update AFTER UPDATE OF name, description, category, place, status ON pantry_items BEGIN
                    INSERT INTO pantry_items_fts (pantry_items_fts, rowid, name, description, category, place)
                    SELECT 'delete', old.rowid, old.name, old.description, old.category, old.place WHERE old.status = 'inPantry';
                    INSERT INTO pantry_items_fts (rowid, name, description, category, place)
                    SELECT new.rowid, new.name, new.description, new.category, new.place WHERE new.status = 'inPantry';
                END;
                """)
        },
        LocalMigration("pantry-2-my-products") { db in
            // Products this user created, so a barcode added once can be scanned again offline.
            try db.execute(sql: """
                CREATE TABLE kb_my_products (
                    localId TEXT PRIMARY KEY NOT NULL,
                    barcode TEXT NOT NULL,
                    name TEXT NOT NULL,
                    description TEXT,
                    serverId TEXT,
                    createdAt INTEGER NOT NULL
                );
                CREATE INDEX kb_my_products_by_barcode ON kb_my_products (barcode);
                """)
        },
        LocalMigration("pantry-3-spaces") { db in
            // The space an item is in (NULL: the person's own) and who changed it last; the mirror writes both.
            try db.execute(sql: """
                ALTER TABLE pantry_items ADD COLUMN space_id TEXT;
                ALTER TABLE pantry_items ADD COLUMN changed_by TEXT;
                CREATE INDEX pantry_items_by_space ON pantry_items (space_id) WHERE space_id IS NOT NULL;
                """)
        },
        LocalMigration("pantry-4-settings") { db in
            // The person's choices on this device (the household new items go to).
            try db.execute(sql: "CREATE TABLE pantry_settings (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)")
        },
        LocalMigration("pantry-5-photos") { db in
            // An item's photo: an attachment's reference (`sha256:<digest>`), its file in the person's attachments folder.
            try db.execute(sql: "ALTER TABLE pantry_items ADD COLUMN photo TEXT")
        },
    ]
}
