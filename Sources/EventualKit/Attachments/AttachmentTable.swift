import EventualAPI
import GRDB

/// `eventual_attachments`: the files in the person's attachments folder, theirs (kept until
/// sign-out) or downloaded (kept within a budget, the least recently read removed first).
enum AttachmentTable {
    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("eventual-engine-6-attachments") { db in
            try db.execute(sql: """
                CREATE TABLE eventual_attachments (
                    sha256 TEXT PRIMARY KEY NOT NULL,
                    size INTEGER NOT NULL,
                    content_type TEXT,
                    -- 'mine': attached on this device; 'downloaded': fetched to be read.
                    origin TEXT NOT NULL CHECK (origin IN ('mine', 'downloaded')),
                    last_used_at INTEGER NOT NULL
                );
                CREATE INDEX eventual_attachments_downloaded ON eventual_attachments (last_used_at) WHERE origin = 'downloaded';
                """)
        }
        migrator.registerMigration("eventual-engine-9-attachment-spaces") { db in
            // NB: the shared space a download came from (NULL: the person's own, or not known): it
            // leaves the device with the space.
            try db.execute(sql: "ALTER TABLE eventual_attachments ADD COLUMN space TEXT")
        }
    }

    /// An attachment made on this device: never evicted (its upload may wait).
    static func mine(_ attachment: PreparedAttachment, at now: Int64, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO eventual_attachments (sha256, size, content_type, origin, last_used_at) VALUES (?, ?, ?, 'mine', ?)
            ON CONFLICT (sha256) DO UPDATE SET origin = 'mine', last_used_at = excluded.last_used_at
            """, arguments: [attachment.reference.sha256, attachment.size, attachment.contentType.rawValue, now])
    }

    static func downloaded(_ sha256: String, size: Int64, space: String?, at now: Int64, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO eventual_attachments (sha256, size, origin, last_used_at, space) VALUES (?, ?, 'downloaded', ?, ?)
            ON CONFLICT (sha256) DO UPDATE SET last_used_at = excluded.last_used_at
            """, arguments: [sha256, size, now, space])
    }

    /// Forgets what was downloaded from `space` (the person left it, or was removed); answers the files to remove.
    static func forgetDownloads(from space: String, _ db: Database) throws -> [String] {
        let forgotten = try String.fetchAll(db, sql: "SELECT sha256 FROM eventual_attachments WHERE origin = 'downloaded' AND space = ?",
                                            arguments: [space])
        try db.execute(sql: "DELETE FROM eventual_attachments WHERE origin = 'downloaded' AND space = ?", arguments: [space])
        return forgotten
    }

    static func used(_ sha256: String, at now: Int64, _ db: Database) throws {
        try db.execute(sql: "UPDATE eventual_attachments SET last_used_at = ? WHERE sha256 = ?", arguments: [now, sha256])
    }

    /// Forgets the least recently read downloads until those kept fit `budget`; answers the files to remove.
    static func evict(beyond budget: Int64, keeping kept: String, _ db: Database) throws -> [String] {
        var total = try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(size), 0) FROM eventual_attachments WHERE origin = 'downloaded'") ?? 0
        guard total > budget else { return [] }
        var evicted: [String] = []
        let rows = try Row.fetchAll(db, sql: """
            SELECT sha256, size FROM eventual_attachments WHERE origin = 'downloaded' AND sha256 != ? ORDER BY last_used_at
            """, arguments: [kept])
        for row in rows where total > budget {
            let sha256: String = row["sha256"]
            total -= row["size"] as Int64
            evicted.append(sha256)
            try db.execute(sql: "DELETE FROM eventual_attachments WHERE sha256 = ?", arguments: [sha256])
        }
        return evicted
    }

    enum Upload: Equatable {
        case waiting
        case refused(String)
    }

    /// Where an upload of the blob stands in the outbox: waiting, refused (with the server's
    /// words), or none (done, or never queued here). A refusal wins over a waiting upload to another space.
    static func upload(of sha256: String, _ db: Database) throws -> Upload? {
        let rows = try Row.fetchAll(db, sql: """
            SELECT state, last_error FROM eventual_outbox WHERE kind = 'call' AND operation = ? AND coalescing_key LIKE ?
            """, arguments: [AttachmentUpload.operation, "%:\(sha256)"])
        if let refused = rows.first(where: { ($0["state"] as String) == "failed" }) {
            return .refused((refused["last_error"] as String?) ?? "refused by the server")
        }
        return rows.isEmpty ? nil : .waiting
    }

    /// The uploads waiting (not refused), and their bytes (those of a file still to fetch from
    /// another space are not known, and not counted).
    static func waiting(_ db: Database) throws -> (count: Int, bytes: Int64) {
        let row = try Row.fetchOne(db, sql: """
            SELECT COUNT(*) AS uploads, COALESCE(SUM(a.size), 0) AS bytes
            FROM eventual_outbox o LEFT JOIN eventual_attachments a ON o.coalescing_key LIKE '%:' || a.sha256
            WHERE o.kind = 'call' AND o.operation = ? AND o.state != 'failed'
            """, arguments: [AttachmentUpload.operation])
        return (row?["uploads"] ?? 0, row?["bytes"] ?? 0)
    }
}
