import EventualAPI
import EventualStorage
import Foundation
import SQLKit

/// A pushed change as the store receives it: its id, and the validated change or why it was refused.
struct SyncSubmission: Sendable {
    let id: String
    let change: Result<ValidatedChange, SyncRejection>
}

/// What became of one pushed change.
enum SyncOutcome: Sendable, Equatable {
    case applied
    case duplicate
    case rejected(String)
}

/// A record as a pull returns it: its merged state and the counter value of its last change.
struct SyncedRecord: Sendable {
    let collection: String
    let recordID: String
    let state: SyncRecordState
    let seq: Int64
}

/// One page of a pull.
struct SyncPage: Sendable {
    let records: [SyncedRecord]
    /// The seq of the last record returned, or the cursor asked for when nothing is new.
    let cursor: Int64
    let hasMore: Bool
}

/// Users' synced records: pushes merged per field, and pulls of what changed after a cursor.
///
/// Why a cursor never skips a change: every record carries `seq`, a value of its user's counter
/// (`sync_counters`) taken by the push that last changed it, and a pull returns `seq > cursor`.
/// A push locks the user's counter row as its first statement (an UPDATE takes the row lock on
/// PostgreSQL; on SQLite the single writer connection is already exclusive) and holds it until it
/// commits. So one user's pushes run one after the other: a push cannot take seq values until
/// the previous one has committed or rolled back (and a rollback undoes its counter update too,
/// so its values are reused, not lost). Seq values therefore become visible in increasing order,
/// and a pull, a single statement on one snapshot, sees every seq up to the newest committed one
/// and none above it. Anything committed after that pull gets a seq above every seq the pull
/// could return, so `seq > cursor` finds it. (A database sequence would not do: a transaction
/// may take value 7, commit after another one took and committed 8, and a pull between the two
/// commits moves its cursor past 7 for ever.)
///
/// The lock also serialises the merges themselves: a push reads the records it changes after it
/// holds the lock, so it always merges into the latest committed state.
struct SyncStore: Sendable {
    /// Rows per multi-row INSERT, well under SQLite's and PostgreSQL's limits on bound values.
    static let rowsPerStatement = 100

    let database: Database

    private struct RecordKey: Hashable {
        let collection: String
        let recordID: String
    }

    /// Applies a batch in one transaction and answers each change, in order. A batch that would
    /// take the user past `quota` records or past `byteQuota` stored bytes is refused whole (`Refusal.quotaExceeded`).
    func push(_ submissions: [SyncSubmission], userID: String, now: Int64, quota: Int = .max,
              byteQuota: Int64 = .max) async throws -> [SyncOutcome] {
        try await database.transaction { sql in
            let lastSeq = try await lockCounter(of: userID, on: sql)
            var appliedIDs = try await appliedChangeIDs(among: submissions.map(\.id), of: userID, on: sql)
            let keys = submissions.compactMap { submission -> RecordKey? in
                guard case .success(let change) = submission.change else { return nil }
                return RecordKey(collection: change.collection, recordID: change.recordID)
            }
            let stored = try await states(of: keys, userID: userID, on: sql)
            var records = stored.mapValues(\.state)
            let existing = Set(records.keys)

            var outcomes: [SyncOutcome] = []
            var newlyApplied: [String] = []
            var changedKeys: [RecordKey] = []
            var changedKeySet = Set<RecordKey>()
            for submission in submissions {
                guard !appliedIDs.contains(submission.id) else {
                    outcomes.append(.duplicate)
                    continue
                }
                switch submission.change {
                case .failure(let rejection):
                    outcomes.append(.rejected(rejection.message))
                case .success(let change):
                    let key = RecordKey(collection: change.collection, recordID: change.recordID)
                    var state = records[key] ?? SyncRecordState()
                    _ = state.apply(change)
                    // NB: a change that lost every comparison still moves its record to a new seq.
                    // Its device skipped the winning values in an earlier pull (its own edit was
                    // pending then, and pending edits are never overwritten); this brings them back.
                    if changedKeySet.insert(key).inserted { changedKeys.append(key) }
                    records[key] = state
                    appliedIDs.insert(submission.id)
                    newlyApplied.append(submission.id)
                    outcomes.append(.applied)
                }
            }

            let created = changedKeys.lazy.filter { !existing.contains($0) }.count
            if created > 0, quota < .max {
                let stored = try await recordCount(of: userID, on: sql)
                guard stored + created <= quota else {
                    throw Refusal.quotaExceeded("Quota reached: you store \(stored) synced records and this push adds \(created);"
                        + " at most \(quota) are allowed. Delete records you no longer need (deleting an existing record frees nothing"
                        + " until it is purged), or push fewer new ones")
                }
            }
            try await recordApplied(newlyApplied, userID: userID, now: now, on: sql)
            let rows = try changedKeys.enumerated().map { offset, key in
                (key: key, columns: try records[key]!.columns(), seq: lastSeq + Int64(offset) + 1)
            }
            let grown = rows.reduce(Int64(0)) { $0 + StorageUsage.bytes(of: $1.columns) - (stored[$1.key]?.bytes ?? 0) }
            try await StorageUsage.add(grown, for: userID, quota: byteQuota, on: sql)
            try await save(rows, userID: userID, now: now, on: sql)
            if !rows.isEmpty {
                try await sql.update("sync_counters").set("last_seq", to: lastSeq + Int64(rows.count))
                    .where("user_id", .equal, userID).run()
            }
            return outcomes
        }
    }

    /// The user's records changed after `cursor`, oldest change first, at most `limit`.
    func pull(userID: String, after cursor: Int64, limit: Int) async throws -> SyncPage {
        let rows = try await database.withConnection { sql in
            try await sql.select()
                .columns("collection", "record_id", "fields", "field_stamps", "counter_deltas", "tombstone", "seq")
                .from("sync_records")
                .where("user_id", .equal, userID).where("seq", .greaterThan, cursor)
                .orderBy("seq").limit(limit + 1)
                .all()
        }
        let records = try rows.prefix(limit).map { row in
            SyncedRecord(collection: try row.decode(column: "collection", as: String.self),
                         recordID: try row.decode(column: "record_id", as: String.self),
                         state: try Self.state(of: row),
                         seq: try row.decode(column: "seq", as: Int64.self))
        }
        return SyncPage(records: records, cursor: records.last?.seq ?? cursor, hasMore: rows.count > limit)
    }

    private func recordCount(of userID: String, on sql: any SQLDatabase) async throws -> Int {
        try await sql.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "stored")
            .from("sync_records").where("user_id", .equal, userID)
            .first()?.decode(column: "stored", as: Int.self) ?? 0
    }

    /// Forgets applied change ids older than `cutoff` (Unix ms): a device offline longer than that
    /// is signed out anyway, so none of its changes can come back.
    func purgeAppliedChanges(before cutoff: Int64) async throws {
        try await database.withConnection { sql in
            try await sql.delete(from: "sync_applied_changes").where("applied_at", .lessThan, cutoff).run()
        }
    }

    /// Creates the user's counter if needed, then locks it for the rest of the transaction.
    private func lockCounter(of userID: String, on sql: any SQLDatabase) async throws -> Int64 {
        try await sql.insert(into: "sync_counters").columns("user_id", "last_seq")
            .values(SQLBind(userID), SQLBind(Int64(0)))
            .ignoringConflicts(with: ["user_id"])
            .run()
        // NB: a no-op UPDATE still takes PostgreSQL's row lock, held until COMMIT; a concurrent
        // push of the same user waits here, then reads the value the first one committed. SQLite's
        // single writer is exclusive already, and skipping it saves the writer one statement.
        if database.dialect == .postgres {
            try await sql.update("sync_counters").set(SQLIdentifier("last_seq"), to: SQLIdentifier("last_seq"))
                .where("user_id", .equal, userID).run()
        }
        guard let row = try await sql.select().column("last_seq").from("sync_counters")
            .where("user_id", .equal, userID).first()
        else { throw StorageError.corrupt("the sync counter of \(userID) vanished inside its transaction") }
        return try row.decode(column: "last_seq", as: Int64.self)
    }

    private func appliedChangeIDs(among ids: [String], of userID: String, on sql: any SQLDatabase) async throws -> Set<String> {
        var applied: Set<String> = []
        for chunk in Self.chunks(of: Array(Set(ids))) {
            let rows = try await sql.select().column("change_id").from("sync_applied_changes")
                .where("user_id", .equal, userID)
                .where(SQLColumn("change_id"), .in, SQLBind.group(Array(chunk)))
                .all()
            for row in rows { applied.insert(try row.decode(column: "change_id", as: String.self)) }
        }
        return applied
    }

    /// The stored state of each of `keys` that exists, with the bytes its columns take.
    private func states(of keys: [RecordKey], userID: String, on sql: any SQLDatabase) async throws
        -> [RecordKey: (state: SyncRecordState, bytes: Int64)]
    {
        var states: [RecordKey: (state: SyncRecordState, bytes: Int64)] = [:]
        let byCollection = Dictionary(grouping: Set(keys), by: \.collection)
        for (collection, keys) in byCollection {
            for chunk in Self.chunks(of: keys.map(\.recordID)) {
                let rows = try await sql.select()
                    .columns("record_id", "fields", "field_stamps", "counter_deltas", "tombstone")
                    .from("sync_records")
                    .where("user_id", .equal, userID).where("collection", .equal, collection)
                    .where(SQLColumn("record_id"), .in, SQLBind.group(Array(chunk)))
                    .all()
                for row in rows {
                    let key = RecordKey(collection: collection, recordID: try row.decode(column: "record_id", as: String.self))
                    let columns = try Self.columns(of: row)
                    states[key] = (try SyncRecordState(columns), StorageUsage.bytes(of: columns))
                }
            }
        }
        return states
    }

    private func recordApplied(_ ids: [String], userID: String, now: Int64, on sql: any SQLDatabase) async throws {
        for chunk in Self.chunks(of: ids) {
            let insert = sql.insert(into: "sync_applied_changes").columns("user_id", "change_id", "applied_at")
            for id in chunk { insert.values(SQLBind(userID), SQLBind(id), SQLBind(now)) }
            try await insert.run()
        }
    }

    private func save(
        _ rows: [(key: RecordKey, columns: SyncRecordState.Columns, seq: Int64)], userID: String, now: Int64, on sql: any SQLDatabase
    ) async throws {
        for chunk in Self.chunks(of: rows) {
            let upsert = sql.insert(into: "sync_records")
                .columns("user_id", "collection", "record_id", "fields", "field_stamps", "counter_deltas", "tombstone", "seq",
                         "updated_at")
            for row in chunk {
                let columns = row.columns
                upsert.values(SQLBind(userID), SQLBind(row.key.collection), SQLBind(row.key.recordID),
                              SQLBind(columns.fields), SQLBind(columns.fieldStamps), SQLBind(columns.counterDeltas),
                              SQLBind(columns.tombstone),
                              SQLBind(row.seq), SQLBind(now))
            }
            try await upsert.onConflict(with: ["user_id", "collection", "record_id"]) { update in
                update.set(excludedValueOf: "fields").set(excludedValueOf: "field_stamps").set(excludedValueOf: "counter_deltas")
                    .set(excludedValueOf: "tombstone").set(excludedValueOf: "seq").set(excludedValueOf: "updated_at")
            }.run()
        }
    }

    private static func state(of row: any SQLRow) throws -> SyncRecordState {
        try SyncRecordState(columns(of: row))
    }

    private static func columns(of row: any SQLRow) throws -> SyncRecordState.Columns {
        .init(
            fields: try row.decode(column: "fields", as: String.self),
            fieldStamps: try row.decode(column: "field_stamps", as: String.self),
            counterDeltas: try row.decode(column: "counter_deltas", as: String?.self),
            tombstone: try row.decode(column: "tombstone", as: String?.self)
        )
    }

    private static func chunks<Element>(of elements: [Element]) -> [ArraySlice<Element>] {
        stride(from: 0, to: elements.count, by: rowsPerStatement).map {
            elements[$0..<min($0 + rowsPerStatement, elements.count)]
        }
    }
}
