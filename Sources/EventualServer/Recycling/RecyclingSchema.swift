/// The tables of SustainU's server side (migration 6), in SQL that SQLite and PostgreSQL both accept.
enum RecyclingSchema {
    static let statements: [String] = [
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
    ]
}
