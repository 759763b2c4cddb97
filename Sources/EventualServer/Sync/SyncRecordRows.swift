import EventualAPI
import EventualStorage
import SQLKit

/// The stored rows of synced records (`sync_records`) and of applied change ids
/// (`sync_applied_changes`), read and written in the caller's transaction.
enum SyncRecordRows {
    /// Rows per multi-row statement, well under SQLite's and PostgreSQL's limits on bound values.
    static let perStatement = 100

    /// The ids among `ids` that `userID` has had applied already.
    static func appliedChangeIDs(among ids: [String], of userID: String, on sql: any SQLDatabase) async throws -> Set<String> {
        var applied: Set<String> = []
        for chunk in Array(Set(ids)).chunks(of: perStatement) {
            let rows = try await sql.select().column("change_id").from("sync_applied_changes")
                .where("user_id", .equal, userID)
                .where(SQLColumn("change_id"), .in, SQLBind.group(Array(chunk)))
                .all()
            for row in rows { applied.insert(try row.decode(column: "change_id", as: String.self)) }
        }
        return applied
    }

    /// Remembers that `ids` of `userID` are applied, so that a retry is answered `duplicate`.
    static func recordApplied(_ ids: [String], userID: String, now: Int64, on sql: any SQLDatabase) async throws {
        for chunk in ids.chunks(of: perStatement) {
            let insert = sql.insert(into: "sync_applied_changes").columns("user_id", "change_id", "applied_at")
            for id in chunk { insert.values(SQLBind(userID), SQLBind(id), SQLBind(now)) }
            try await insert.run()
        }
    }

    /// The stored state of each of `keys` that exists, with the bytes its columns take.
    static func states(of keys: [SyncRecordKey], on sql: any SQLDatabase) async throws
        -> [SyncRecordKey: (state: SyncRecordState, bytes: Int64)]
    {
        struct Group: Hashable {
            let space: String
            let collection: String
        }
        var states: [SyncRecordKey: (state: SyncRecordState, bytes: Int64)] = [:]
        let groups = Dictionary(grouping: Set(keys)) { Group(space: $0.space, collection: $0.collection) }
        for (group, keys) in groups {
            for chunk in keys.map(\.recordID).chunks(of: perStatement) {
                let rows = try await sql.select()
                    .columns("record_id", "fields", "field_stamps", "counter_deltas", "tombstone")
                    .from("sync_records")
                    .where("space_id", .equal, group.space).where("collection", .equal, group.collection)
                    .where(SQLColumn("record_id"), .in, SQLBind.group(Array(chunk)))
                    .all()
                for row in rows {
                    let key = SyncRecordKey(space: group.space, collection: group.collection,
                                            recordID: try row.decode(column: "record_id", as: String.self))
                    let columns = try Self.columns(of: row)
                    states[key] = (try SyncRecordState(columns), StorageUsage.bytes(of: columns))
                }
            }
        }
        return states
    }

    /// The stored states of the records `ids` of each collection in every space `userID` is a member of.
    static func states(of ids: [String: Set<String>], visibleTo userID: String, on sql: any SQLDatabase) async throws
        -> [SyncRecordKey: SyncRecordState]
    {
        var states: [SyncRecordKey: SyncRecordState] = [:]
        for (collection, ids) in ids.sorted(by: { $0.key < $1.key }) {
            for chunk in ids.sorted().chunks(of: perStatement) {
                let rows = try await sql.raw("""
                    SELECT space_id, record_id, fields, field_stamps, counter_deltas, tombstone FROM sync_records
                    WHERE collection = \(bind: collection) AND record_id IN (\(binds: Array(chunk)))
                      AND \(SpaceGate.isMember(userID, spaceColumn: "space_id"))
                    """).all()
                for row in rows {
                    let key = SyncRecordKey(space: try row.decode(column: "space_id", as: String.self), collection: collection,
                                            recordID: try row.decode(column: "record_id", as: String.self))
                    states[key] = try state(of: row)
                }
            }
        }
        return states
    }

    /// The records of `keys` as a pull returns them, those that exist.
    static func syncedRecords(_ keys: [SyncRecordKey], on sql: any SQLDatabase) async throws -> [SyncRecordKey: SyncedRecord] {
        var records: [SyncRecordKey: SyncedRecord] = [:]
        for key in Set(keys) {
            let row = try await sql.raw("""
                SELECT r.fields, r.field_stamps, r.counter_deltas, r.tombstone, r.seq, u.username AS changed_by_name
                FROM sync_records r LEFT JOIN users u ON u.id = r.changed_by
                WHERE r.space_id = \(bind: key.space) AND r.collection = \(bind: key.collection) AND r.record_id = \(bind: key.recordID)
                """).first()
            guard let row else { continue }
            records[key] = SyncedRecord(space: key.space, collection: key.collection, recordID: key.recordID, state: try state(of: row),
                                        seq: try row.decode(column: "seq", as: Int64.self),
                                        changedBy: try row.decode(column: "changed_by_name", as: String?.self))
        }
        return records
    }

    /// A merged record ready to be written: its columns, the seq it takes and whether it is deleted.
    struct Row {
        let key: SyncRecordKey
        let columns: SyncRecordState.Columns
        let seq: Int64
        let deleted: Bool
    }

    /// Writes the merged records; `authors` names who made the newest applied change of each (a
    /// record not in it keeps the author it has).
    static func save(_ rows: [Row], authors: [SyncRecordKey: String], now: Int64, on sql: any SQLDatabase) async throws {
        for chunk in rows.chunks(of: perStatement) {
            let upsert = sql.insert(into: "sync_records")
                .columns("space_id", "collection", "record_id", "fields", "field_stamps", "counter_deltas", "tombstone", "seq",
                         "updated_at", "changed_by", "deleted")
            for row in chunk {
                let columns = row.columns
                upsert.values(SQLBind(row.key.space), SQLBind(row.key.collection), SQLBind(row.key.recordID),
                              SQLBind(columns.fields), SQLBind(columns.fieldStamps), SQLBind(columns.counterDeltas),
                              SQLBind(columns.tombstone),
                              SQLBind(row.seq), SQLBind(now), SQLBind(authors[row.key]), SQLBind(row.deleted ? 1 : 0))
            }
            try await upsert.onConflict(with: ["space_id", "collection", "record_id"]) { update in
                update.set(excludedValueOf: "fields").set(excludedValueOf: "field_stamps").set(excludedValueOf: "counter_deltas")
                    .set(excludedValueOf: "tombstone").set(excludedValueOf: "seq").set(excludedValueOf: "updated_at")
                    .set("changed_by", to: SQLFunction("COALESCE", args: SQLExcludedColumn("changed_by"), SQLColumn("changed_by", table: "sync_records")))
                    .set(excludedValueOf: "deleted")
            }.run()
        }
    }

    /// The records of every space `ownerID` owns.
    /// The live records of the spaces `ownerID` owns: what the record quota counts (a deletion
    /// frees its place at once; its tombstone still weighs in the byte quota until it is purged).
    static func count(ownedBy ownerID: String, on sql: any SQLDatabase) async throws -> Int {
        try await sql.raw("""
            SELECT COUNT(*) AS stored FROM sync_records
            WHERE deleted = 0 AND space_id IN (SELECT id FROM spaces WHERE owner_id = \(bind: ownerID))
            """).first()?.decode(column: "stored", as: Int.self) ?? 0
    }

    static func state(of row: any SQLRow) throws -> SyncRecordState {
        try SyncRecordState(columns(of: row))
    }

    static func columns(of row: any SQLRow) throws -> SyncRecordState.Columns {
        .init(
            fields: try row.decode(column: "fields", as: String.self),
            fieldStamps: try row.decode(column: "field_stamps", as: String.self),
            counterDeltas: try row.decode(column: "counter_deltas", as: String?.self),
            tombstone: try row.decode(column: "tombstone", as: String?.self)
        )
    }
}
