/// One schema change. Shipped migrations are never edited: add a new one instead.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    /// Statements in SQL that SQLite and PostgreSQL both accept.
    public let statements: [String]
}

extension Migration {
    /// Every migration, oldest first. Append only.
    public static let all: [Migration] = [
        Migration(version: 1, name: "accounts and knowledge base", statements: [
            """
            CREATE TABLE server_secrets (
                name TEXT PRIMARY KEY,
                value TEXT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE users (
                id TEXT PRIMARY KEY,
                username TEXT NOT NULL,
                username_key TEXT NOT NULL UNIQUE,
                email TEXT NOT NULL,
                email_key TEXT NOT NULL UNIQUE,
                password_hash TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            // An access token is kept only as its SHA-256: a stolen copy of the database cannot sign anyone in.
            """
            CREATE TABLE access_tokens (
                token_hash TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                revoked_at BIGINT
            )
            """,
            "CREATE INDEX access_tokens_by_expiry ON access_tokens (expires_at)",
            // `gtin` is the barcode normalised to 14 digits; `barcode` is the form its creator sent.
            // `score` is the sum of the product's votes, kept in the vote's transaction so that a
            // look-up is one index range scan.
            """
            CREATE TABLE products (
                id TEXT PRIMARY KEY,
                gtin TEXT NOT NULL,
                barcode TEXT NOT NULL,
                name TEXT NOT NULL,
                description TEXT,
                img TEXT,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                score BIGINT NOT NULL DEFAULT 0,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX products_by_gtin_score ON products (gtin, score DESC, created_at)",
            "CREATE INDEX products_by_user ON products (user_id)",
            """
            CREATE TABLE votes (
                id TEXT PRIMARY KEY,
                product_id TEXT NOT NULL REFERENCES products (id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                rating INTEGER NOT NULL CHECK (rating BETWEEN -5 AND 5),
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                UNIQUE (product_id, user_id)
            )
            """,
            "CREATE INDEX votes_by_user ON votes (user_id)",
            // The first answer to a request sent with an Idempotency-Key, replayed for 24 hours.
            """
            CREATE TABLE idempotency_keys (
                scope TEXT NOT NULL,
                idempotency_key TEXT NOT NULL,
                request_hash TEXT NOT NULL,
                status INTEGER NOT NULL,
                body TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (scope, idempotency_key)
            )
            """,
            "CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at)",
        ]),
        Migration(version: 2, name: "sync records", statements: [
            // `seq` of a user's records come from this counter. A push locks the user's row first
            // thing in its transaction, so one user's pushes run one at a time and commit in the
            // order of their seq values (see SyncStore).
            """
            CREATE TABLE sync_counters (
                user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
                last_seq BIGINT NOT NULL
            )
            """,
            // The merged state of one record: `fields` is a JSON object of its values,
            // `field_stamps` a JSON object of the HLC stamp that wrote each field, `tombstone` the
            // stamp of its newest delete. `seq` is the counter value of the last push that changed it.
            """
            CREATE TABLE sync_records (
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                collection TEXT NOT NULL,
                record_id TEXT NOT NULL,
                fields TEXT NOT NULL,
                field_stamps TEXT NOT NULL,
                tombstone TEXT,
                seq BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, collection, record_id)
            )
            """,
            "CREATE UNIQUE INDEX sync_records_by_seq ON sync_records (user_id, seq)",
            // The change ids applied for a user, written in the transaction of the change itself.
            """
            CREATE TABLE sync_applied_changes (
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                change_id TEXT NOT NULL,
                applied_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, change_id)
            )
            """,
        ]),
        Migration(version: 3, name: "throttles and purges", statements: [
            // Failed logins and registrations, counted per bucket (an HMAC of account and address).
            """
            CREATE TABLE throttle_events (
                bucket TEXT NOT NULL,
                at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX throttle_events_by_bucket ON throttle_events (bucket, at)",
            "CREATE INDEX throttle_events_by_age ON throttle_events (at)",
            // Housekeeping forgets applied change ids older than the longest offline period.
            "CREATE INDEX sync_applied_changes_by_age ON sync_applied_changes (applied_at)",
        ]),
        Migration(version: 4, name: "sync counters", statements: [
            // The deltas added to each counter field since its last explicit set, as a JSON object
            // of field name to [[stamp, amount], ...]: a set that arrives late, stamped before some
            // of them, keeps them (see SyncRecordState).
            "ALTER TABLE sync_records ADD COLUMN counter_deltas TEXT",
        ]),
        Migration(version: 5, name: "roles", statements: [
            // `user` or `admin` (see UserRole). Admins read analytics and attach offers to shops;
            // `eventual-server user grant-admin EMAIL` is the only way to make one.
            "ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'user'",
        ]),
        // Reserved, so that work in flight can land in any order: 6 recycling, 7 spending, 8 analytics.
        Migration(version: 6, name: "recycling", statements: [
            // SustainU's tables.
            // One row per OpenStreetMap `amenity=recycling` object; `id` is its OSM id ("node/457722547").
            // `materials` is a comma-separated list of PointMaterial raw values, in their order.
            // `content_hash` covers every imported field (not `visits`), so that an import can tell an
            // unchanged point from a changed one without comparing field by field.
            """
            CREATE TABLE recycling_points (
                id TEXT PRIMARY KEY,
                name TEXT,
                latitude DOUBLE PRECISION NOT NULL,
                longitude DOUBLE PRECISION NOT NULL,
                kind TEXT NOT NULL,
                materials TEXT NOT NULL,
                opening_hours TEXT,
                operator TEXT,
                description TEXT,
                visits BIGINT NOT NULL DEFAULT 0,
                content_hash TEXT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            // A visit is counted once per (user, visit id): the client makes the id, a replay counts nothing.
            """
            CREATE TABLE recycling_visits (
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                visit_id TEXT NOT NULL,
                point_id TEXT NOT NULL REFERENCES recycling_points (id) ON DELETE CASCADE,
                visited_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, visit_id)
            )
            """,
            // The packaging catalogue: a GTIN (14 digits) to its parts as a JSON array of PackagingPart.
            // `version` is unique per change, so that deltas page cleanly by it.
            """
            CREATE TABLE recycling_packaging (
                gtin TEXT PRIMARY KEY,
                parts TEXT NOT NULL,
                version BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX recycling_packaging_by_version ON recycling_packaging (version)",
            // One classified scan. `local_day` (YYYY-MM-DD) is the day of `taken_at` in the scan's own
            // time zone: the daily cap and the streaks count these days. `result` is the whole first
            // answer (JSON), replayed for a repeated scan id.
            """
            CREATE TABLE recycling_scans (
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                scan_id TEXT NOT NULL,
                taken_at BIGINT NOT NULL,
                time_zone TEXT NOT NULL,
                local_day TEXT NOT NULL,
                barcode TEXT,
                detected INTEGER NOT NULL,
                trash_type TEXT,
                bin TEXT,
                points INTEGER NOT NULL,
                source TEXT NOT NULL,
                message TEXT NOT NULL,
                special_point_id TEXT,
                result TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, scan_id)
            )
            """,
            "CREATE INDEX recycling_scans_by_day ON recycling_scans (user_id, local_day)",
            // Each user's total, kept in the scan's transaction. Its row is also the per-user lock that
            // makes the daily cap hold under concurrent scans on PostgreSQL.
            """
            CREATE TABLE recycling_scores (
                user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
                total BIGINT NOT NULL
            )
            """,
            "CREATE INDEX recycling_scores_by_total ON recycling_scores (total)",
            // Counters behind the ETags: `points` changes when an import changes a point, `visits`
            // with every counted visit, `packaging` is the catalogue's newest change.
            """
            CREATE TABLE recycling_versions (
                name TEXT PRIMARY KEY,
                version BIGINT NOT NULL
            )
            """,
            "INSERT INTO recycling_versions (name, version) VALUES ('points', 0), ('visits', 0), ('packaging', 0)",
        ]),
        Migration(version: 7, name: "spending", statements: [
            // Set when the person typed the code mailed at registration; SpendiQ's endpoints
            // refuse the person until then. `last_seen_at`: the last time they opened SpendiQ (Unix ms).
            "ALTER TABLE users ADD COLUMN email_verified_at BIGINT",
            "ALTER TABLE users ADD COLUMN last_seen_at BIGINT",
            // The code is kept only as an HMAC under a server key; 5 wrong tries or 10 minutes end it.
            """
            CREATE TABLE email_verifications (
                user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
                code_hash TEXT NOT NULL,
                expires_at BIGINT NOT NULL,
                failed_attempts INTEGER NOT NULL DEFAULT 0,
                sent_at BIGINT NOT NULL
            )
            """,
            // The newest position a device sent (older ones arriving late are ignored).
            """
            CREATE TABLE spending_locations (
                user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
                latitude DOUBLE PRECISION NOT NULL,
                longitude DOUBLE PRECISION NOT NULL,
                at BIGINT NOT NULL
            )
            """,
            // Shops from OpenStreetMap (`osm_id` like node/267885935), imported by import-shops.
            """
            CREATE TABLE shops (
                id TEXT PRIMARY KEY,
                osm_id TEXT NOT NULL UNIQUE,
                name TEXT,
                shop_type TEXT NOT NULL,
                latitude DOUBLE PRECISION NOT NULL,
                longitude DOUBLE PRECISION NOT NULL,
                address TEXT,
                updated_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX shops_by_position ON shops (latitude, longitude)",
            // `featured` and `demo` are 0 or 1 (one type on both databases).
            """
            CREATE TABLE offers (
                id TEXT PRIMARY KEY,
                shop_id TEXT NOT NULL REFERENCES shops (id) ON DELETE CASCADE,
                title TEXT NOT NULL,
                description TEXT,
                category TEXT NOT NULL,
                discount_percent INTEGER,
                featured INTEGER NOT NULL DEFAULT 0,
                demo INTEGER NOT NULL DEFAULT 0,
                valid_until BIGINT,
                created_by TEXT,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX offers_by_shop ON offers (shop_id)",
            // One row per view; the key (the device's outbox entry id) makes a replay count once.
            """
            CREATE TABLE offer_views (
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                view_key TEXT NOT NULL,
                offer_id TEXT NOT NULL REFERENCES offers (id) ON DELETE CASCADE,
                viewed_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, view_key)
            )
            """,
            "CREATE INDEX offer_views_by_offer ON offer_views (offer_id)",
        ]),
        Migration(version: 8, name: "analytics", statements: [
            // Usage events from the apps, one row per event id and user (the key that makes a resent
            // batch change nothing). `occurred_at` is the device's clock, `received_at` the server's.
            // `subject`, `qualifier` and `amount` hold the properties the questions group by and add
            // up (see AnalyticsColumns), so that every question is plain SQL on both databases;
            // `properties` keeps them all as JSON.
            """
            CREATE TABLE analytics_events (
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                event_id TEXT NOT NULL,
                name TEXT NOT NULL,
                app TEXT NOT NULL,
                app_version TEXT NOT NULL,
                platform TEXT NOT NULL,
                session_id TEXT NOT NULL,
                occurred_at BIGINT NOT NULL,
                received_at BIGINT NOT NULL,
                subject TEXT,
                qualifier TEXT,
                amount DOUBLE PRECISION,
                properties TEXT NOT NULL,
                PRIMARY KEY (event_id, user_id)
            )
            """,
            // NB: the key starts with the event id, a UUIDv7 that grows with time, so a batch's rows
            // land at the end of the index rather than all over it (user_id first cost a page read
            // per row at a million events). The two indexes below cover the questions: each reads
            // only an index, never the table.
            "CREATE INDEX analytics_events_by_question ON analytics_events (app, name, occurred_at, subject, user_id, amount, qualifier)",
            "CREATE INDEX analytics_events_by_time ON analytics_events (app, occurred_at, platform, user_id)",
            // Who used which app on which platform in each hour (Unix ms / 3,600,000), and how many
            // events they sent: kept with the events (from the newly filed ones only, so a batch sent
            // again adds nothing), so the questions over all of an app's use read one row per
            // person-hour instead of every event.
            """
            CREATE TABLE analytics_activity (
                app TEXT NOT NULL,
                hour_bucket BIGINT NOT NULL,
                platform TEXT NOT NULL,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                events BIGINT NOT NULL,
                PRIMARY KEY (app, hour_bucket, platform, user_id)
            )
            """,
        ]),
        Migration(version: 9, name: "storage usage", statements: [
            // The bytes each user stores: synced records' values and stamps, and the text and image
            // of the products they created. Kept in the transaction of every change to them, so the
            // byte quota is checked without adding anything up (see StorageUsage).
            """
            CREATE TABLE storage_usage (
                user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
                bytes BIGINT NOT NULL
            )
            """,
            """
            INSERT INTO storage_usage (user_id, bytes)
            SELECT user_id, SUM(bytes) FROM (
                SELECT user_id, octet_length(fields) + octet_length(field_stamps)
                    + COALESCE(octet_length(counter_deltas), 0) + COALESCE(octet_length(tombstone), 0) AS bytes
                FROM sync_records
                UNION ALL
                SELECT user_id, octet_length(name) + COALESCE(octet_length(description), 0) + COALESCE(octet_length(img), 0) AS bytes
                FROM products
            ) AS stored
            GROUP BY user_id
            """,
        ]),
        Migration(version: 10, name: "usage limits and packaging sources", statements: [
            // How many usage events each user filed in each hour of the server's clock (Unix ms /
            // 3,600,000): the limit on events a day reads at most 25 rows instead of counting events.
            """
            CREATE TABLE analytics_filing (
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                hour_bucket BIGINT NOT NULL,
                events BIGINT NOT NULL,
                PRIMARY KEY (user_id, hour_bucket)
            )
            """,
            """
            INSERT INTO analytics_filing (user_id, hour_bucket, events)
            SELECT user_id, received_at / 3600000, COUNT(*) FROM analytics_events GROUP BY user_id, received_at / 3600000
            """,
            // Usage events count in the byte quota from now on: those already filed too (see AnalyticsStore.bytes).
            """
            INSERT INTO storage_usage (user_id, bytes)
            SELECT user_id, SUM(octet_length(event_id) + octet_length(name) + octet_length(app) + octet_length(app_version)
                + octet_length(platform) + octet_length(session_id) + COALESCE(octet_length(subject), 0)
                + COALESCE(octet_length(qualifier), 0) + octet_length(properties) + 24)
            FROM analytics_events WHERE 1 = 1 GROUP BY user_id
            ON CONFLICT (user_id) DO UPDATE SET bytes = storage_usage.bytes + excluded.bytes
            """,
            // The cap on scans that earn points counts a rolling 24 hours of `taken_at`.
            "CREATE INDEX recycling_scans_by_time ON recycling_scans (user_id, taken_at)",
            // Where a barcode's parts came from: 'packaging' (import-packaging, a retailer's parts
            // with weights) or 'products' (import-products' packaging columns). A products import
            // never replaces the parts of a packaging import.
            "ALTER TABLE recycling_packaging ADD COLUMN source TEXT NOT NULL DEFAULT 'packaging'",
        ]),
        Migration(version: 11, name: "spaces", statements: [
            // A space holds synced records for its members. `kind` is 'personal' or 'shared'; every
            // person's personal space has their user id as its id, so records keep their keys.
            """
            CREATE TABLE spaces (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                kind TEXT NOT NULL,
                owner_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX spaces_by_owner ON spaces (owner_id)",
            // `role` is 'owner', 'editor' or 'viewer'. A member who left or was removed keeps the row
            // with `left_at` set, so that a push or a pull can name the space they are no longer in.
            """
            CREATE TABLE space_members (
                space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                role TEXT NOT NULL,
                added_at BIGINT NOT NULL,
                left_at BIGINT,
                PRIMARY KEY (space_id, user_id)
            )
            """,
            "CREATE INDEX space_members_by_user ON space_members (user_id, space_id)",
            // `invitee_email` is lower-cased (AccountRules.key), matched against users.email_key when
            // its person asks. `state`: 'pending', 'accepted', 'declined' or 'withdrawn'.
            """
            CREATE TABLE space_invitations (
                id TEXT PRIMARY KEY,
                space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
                invited_by TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                invitee_user_id TEXT REFERENCES users (id) ON DELETE CASCADE,
                invitee_email TEXT,
                role TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                state TEXT NOT NULL
            )
            """,
            "CREATE INDEX space_invitations_by_user ON space_invitations (invitee_user_id, state)",
            "CREATE INDEX space_invitations_by_email ON space_invitations (invitee_email, state)",
            "CREATE INDEX space_invitations_by_space ON space_invitations (space_id, state)",
            "INSERT INTO spaces (id, name, kind, owner_id, created_at) SELECT id, 'Personal', 'personal', id, created_at FROM users",
            "INSERT INTO space_members (space_id, user_id, role, added_at) SELECT id, id, 'owner', created_at FROM users",
            // Records and counters are keyed by space instead of user (rebuilt: SQLite cannot change
            // a key). `changed_by` is the user whose change was applied last.
            """
            CREATE TABLE space_records (
                space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
                collection TEXT NOT NULL,
                record_id TEXT NOT NULL,
                fields TEXT NOT NULL,
                field_stamps TEXT NOT NULL,
                counter_deltas TEXT,
                tombstone TEXT,
                seq BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                changed_by TEXT REFERENCES users (id) ON DELETE SET NULL,
                PRIMARY KEY (space_id, collection, record_id)
            )
            """,
            """
            INSERT INTO space_records (space_id, collection, record_id, fields, field_stamps, counter_deltas, tombstone, seq,
                                       updated_at, changed_by)
            SELECT user_id, collection, record_id, fields, field_stamps, counter_deltas, tombstone, seq, updated_at, user_id
            FROM sync_records
            """,
            "DROP TABLE sync_records",
            "ALTER TABLE space_records RENAME TO sync_records",
            "CREATE UNIQUE INDEX sync_records_by_seq ON sync_records (space_id, seq)",
            // One counter per space; a push locks those of its spaces in id order (see SyncStore).
            """
            CREATE TABLE space_counters (
                space_id TEXT PRIMARY KEY REFERENCES spaces (id) ON DELETE CASCADE,
                last_seq BIGINT NOT NULL
            )
            """,
            "INSERT INTO space_counters (space_id, last_seq) SELECT id, 0 FROM users",
            "UPDATE space_counters SET last_seq = (SELECT last_seq FROM sync_counters WHERE sync_counters.user_id = space_counters.space_id) "
                + "WHERE space_id IN (SELECT user_id FROM sync_counters)",
            "DROP TABLE sync_counters",
            "ALTER TABLE space_counters RENAME TO sync_counters",
        ]),
        Migration(version: 12, name: "deleted records and their purge", statements: [
            // `deleted`: 1 when the record's newest change is its delete, 0 when it is alive; NULL
            // for a row with a tombstone written before this migration, until housekeeping reads it
            // (an edit stamped after a delete brings a record back, which SQL cannot see).
            "ALTER TABLE sync_records ADD COLUMN deleted INTEGER",
            "UPDATE sync_records SET deleted = 0 WHERE tombstone IS NULL",
            "CREATE INDEX sync_records_deleted ON sync_records (updated_at) WHERE deleted = 1",
            "CREATE INDEX sync_records_unclassified ON sync_records (space_id) WHERE deleted IS NULL",
            // The newest seq of a deleted record purged from the space: a cursor below it missed a deletion.
            "ALTER TABLE sync_counters ADD COLUMN purged_through BIGINT NOT NULL DEFAULT 0",
        ]),
        Migration(version: 13, name: "attachments", statements: [
            // A blob of a space, addressed by its SHA-256 (64 lowercase hex digits): stored once per
            // space however many records refer to it. `received` bytes of `size` are in; `complete`
            // (0 or 1) once they matched the digest, and only then do they count in the byte quota of
            // the space's owner. `content_type` is known from the first bytes. `touched_at` is the
            // last begin or append: housekeeping keeps a blob touched within the grace period even
            // when no record refers to it (yet).
            """
            CREATE TABLE attachments (
                space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
                sha256 TEXT NOT NULL,
                size BIGINT NOT NULL,
                received BIGINT NOT NULL,
                complete INTEGER NOT NULL DEFAULT 0,
                content_type TEXT,
                created_at BIGINT NOT NULL,
                touched_at BIGINT NOT NULL,
                completed_at BIGINT,
                PRIMARY KEY (space_id, sha256)
            )
            """,
            "CREATE INDEX attachments_by_age ON attachments (complete, touched_at)",
            // The bytes, one row per chunk as it was sent (at most the chunk limit, 1 MiB by default),
            // so that reading a blob never needs one value of its whole size. BYTEA is PostgreSQL's
            // type; SQLite keeps a blob bound to it as it is.
            """
            CREATE TABLE attachment_chunks (
                space_id TEXT NOT NULL,
                sha256 TEXT NOT NULL,
                byte_offset BIGINT NOT NULL,
                data BYTEA NOT NULL,
                PRIMARY KEY (space_id, sha256, byte_offset),
                FOREIGN KEY (space_id, sha256) REFERENCES attachments (space_id, sha256) ON DELETE CASCADE
            )
            """,
        ]),
        Migration(version: 14, name: "who begins an upload", statements: [
            // The account that began an upload: its bytes under way count against that account's
            // quota, not the space owner's (NULL for uploads begun before: the owner's, as then).
            "ALTER TABLE attachments ADD COLUMN begun_by TEXT",
            "CREATE INDEX attachments_under_way_by ON attachments (begun_by) WHERE complete = 0",
        ]),
        Migration(version: 15, name: "a space belongs to one app", statements: [
            // The app whose records a shared space holds ('pantry', 'sustainu', 'spendiq'): it alone
            // lists the space, invites to it and files records into it. NULL for a personal space
            // (every app's) and for a shared space no record has claimed yet; those made before are
            // assigned by what they hold.
            "ALTER TABLE spaces ADD COLUMN app TEXT",
            """
            UPDATE spaces SET app = 'spendiq' WHERE kind = 'shared' AND EXISTS (
                SELECT 1 FROM sync_records r WHERE r.space_id = spaces.id
                AND r.collection IN ('spending_accounts', 'spending_transactions', 'spending_limits'))
            """,
            """
            UPDATE spaces SET app = 'pantry' WHERE kind = 'shared' AND app IS NULL AND EXISTS (
                SELECT 1 FROM sync_records r WHERE r.space_id = spaces.id AND r.collection = 'pantry_items')
            """,
        ]),
        Migration(version: 16, name: "a history of commits", statements: [
            // Every commit that moved a space's counter, with a random tag (`SyncHistory`): a
            // device that names a tag this table does not hold saw a commit the server lost (a
            // backup restored). The newest commits of spaces made before get a tag when first
            // asked for (`SpaceGate.heads`).
            """
            CREATE TABLE sync_history (
                space_id TEXT NOT NULL,
                seq BIGINT NOT NULL,
                tag TEXT NOT NULL,
                PRIMARY KEY (space_id, seq)
            )
            """,
            "CREATE INDEX sync_history_by_tag ON sync_history (tag)",
        ]),
        Migration(version: 17, name: "deployed apps", statements: [
            // Every declaration of an app deployed here (`DeployedApps`): the newest of each app
            // is served. `revision` grows with every deploy of any app, so a running server knows
            // a deploy by the newest revision alone.
            """
            CREATE TABLE deployed_apps (
                app_id TEXT NOT NULL,
                revision BIGINT NOT NULL UNIQUE,
                declaration TEXT NOT NULL,
                deployed_at BIGINT NOT NULL,
                PRIMARY KEY (app_id, revision)
            )
            """,
        ]),
    ]
}
