import EventualStorage
import SQLKit

/// Housekeeping: what the server may forget of synced records, and when.
extension SyncStore {
    /// Forgets applied change ids older than `cutoff` (Unix ms): a device offline longer than that
    /// is signed out anyway, so none of its changes can come back.
    func purgeAppliedChanges(before cutoff: Int64) async throws {
        try await database.withConnection { sql in
            try await sql.delete(from: "sync_applied_changes").where("applied_at", .lessThan, cutoff).run()
        }
    }

    /// Deletes the records deleted before `cutoff` (Unix ms), which stop counting against their
    /// owner's quotas, and raises each space's `purged_through` to the newest seq it removed, so
    /// that a device whose cursor is older is told to start over instead of keeping them for ever.
    /// Returns how many records went.
    ///
    /// A space at a time, in a transaction that holds its counter's lock as a push does: a push that
    /// brings a record back (an edit stamped after its delete) gives it a new seq and `deleted` 0,
    /// so the purge, which only removes `deleted` rows at or below the seq it read, never takes it.
    @discardableResult
    func purgeDeletedRecords(before cutoff: Int64) async throws -> Int {
        try await classifyUnclassifiedRecords()
        let spaces = try await database.withConnection { sql in
            try await sql.raw("""
                SELECT space_id, MAX(seq) AS through FROM sync_records
                WHERE deleted = 1 AND updated_at < \(bind: cutoff) GROUP BY space_id ORDER BY space_id
                """).all().map { (try $0.decode(column: "space_id", as: String.self), try $0.decode(column: "through", as: Int64.self)) }
        }
        var purged = 0
        for (spaceID, through) in spaces {
            purged += try await database.transaction { sql in
                try await SpaceGate.lock([spaceID], on: sql)
                try await SpaceGate.markPurged(spaceID, through: through, on: sql)
                let condition: SQLQueryString = """
                    space_id = \(bind: spaceID) AND deleted = 1 AND updated_at < \(bind: cutoff) AND seq <= \(bind: through)
                    """
                let rows = try await sql.raw("SELECT fields, field_stamps, counter_deltas, tombstone FROM sync_records WHERE \(condition)").all()
                let bytes = try rows.reduce(Int64(0)) { $0 + StorageUsage.bytes(of: try SyncRecordRows.columns(of: $1)) }
                try await sql.raw("DELETE FROM sync_records WHERE \(condition)").run()
                if let owner = try await sql.select().column("owner_id").from("spaces").where("id", .equal, spaceID).first() {
                    try await StorageUsage.add(-bytes, for: try owner.decode(column: "owner_id", as: String.self), quota: .max, on: sql)
                }
                return rows.count
            }
        }
        return purged
    }

    /// Says for each record written before migration 12 whether it is deleted (its `deleted` is
    /// NULL until then): a record whose tombstone is older than one of its edits is alive.
    private func classifyUnclassifiedRecords() async throws {
        while true {
            let done = try await database.transaction { sql in
                let rows = try await sql.raw("""
                    SELECT space_id, collection, record_id, seq, fields, field_stamps, counter_deltas, tombstone
                    FROM sync_records WHERE deleted IS NULL LIMIT 500
                    """).all()
                for row in rows {
                    let deleted = try SyncRecordRows.state(of: row).isDeleted
                    // NB: `seq` and `deleted IS NULL` again: a push that rewrote the row since set it itself.
                    try await sql.raw("""
                        UPDATE sync_records SET deleted = \(bind: deleted ? 1 : 0)
                        WHERE space_id = \(bind: try row.decode(column: "space_id", as: String.self))
                          AND collection = \(bind: try row.decode(column: "collection", as: String.self))
                          AND record_id = \(bind: try row.decode(column: "record_id", as: String.self))
                          AND seq = \(bind: try row.decode(column: "seq", as: Int64.self)) AND deleted IS NULL
                        """).run()
                }
                return rows.count < 500
            }
            if done { return }
        }
    }
}
