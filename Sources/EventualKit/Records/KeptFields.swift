import EventualAPI
import Foundation
import GRDB

/// What a pulled record holds that this version of the app does not declare, kept rather than
/// dropped (`eventual_kept`): the fields a newer version added, and the records of a collection
/// this device does not mirror yet. They are written in the transaction that writes the page and
/// moves the cursor, so that the cursor never passes a value this device then lacks; when the app
/// is upgraded and declares them, `fold` puts them into their new columns with no network, in the
/// transaction that adds the columns. An old device never sends a field it does not know (a change
/// carries the fields it sets), so keeping them is only ever for its own later version.
enum KeptFields {
    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("eventual-engine-13-kept-fields") { db in
            // NB: `fields` is a JSON object of the undeclared fields as the server last sent them;
            // `whole` marks a record of a collection not mirrored then, its every field kept.
            try db.execute(sql: """
                CREATE TABLE eventual_kept (
                    collection TEXT NOT NULL,
                    record_id TEXT NOT NULL,
                    fields TEXT NOT NULL,
                    hlc TEXT NOT NULL,
                    space TEXT,
                    changed_by TEXT,
                    whole INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (collection, record_id)
                ) WITHOUT ROWID
                """)
            // NB: a device that pulled before keeping existed dropped what it did not declare then.
            let pulledBefore = try Bool.fetchOne(db, sql: """
                SELECT EXISTS (SELECT 1 FROM eventual_subscriptions WHERE cursor IS NOT NULL)
                    OR EXISTS (SELECT 1 FROM eventual_state WHERE key = ?)
                """, arguments: [EngineSchema.Key.pullCursor.rawValue]) ?? false
            if pulledBefore { try EngineSchema.setValue(Self.unrecordedGap, for: .keptGap, db) }
        }
    }

    // MARK: - What keeping missed

    /// The gap's value until the engine, which knows the mirrors, records what they declared.
    private static let unrecordedGap = "unrecorded"

    /// Whether this device pulled before it kept, and the engine has not recorded yet what it declared then.
    static func gapIsUnrecorded(_ db: Database) throws -> Bool {
        try EngineSchema.value(.keptGap, db) == unrecordedGap
    }

    /// The fields of `mirrors` that no pull kept and no back fill has been asked for: a device
    /// that pulled before keeping existed (or had what it kept removed: `forgetAll`) dropped the
    /// values of the fields it did not declare then, so each such field it declares now is back
    /// filled from the server (`SubscriptionTable.queueFieldFills`), once: it is then noted as
    /// known. Empty for a device that kept from its first pull. By collection.
    static func fieldsToBackFill(_ mirrors: [TableMirror], _ db: Database) throws -> [String: [String]] {
        guard let value = try EngineSchema.value(.keptGap, db) else { return [:] }
        var known: [String: Set<String>]
        if value == unrecordedGap {
            // NB: before `addMissingColumns`: the columns are the fields it declared when its pulls dropped the rest.
            known = [:]
            for mirror in mirrors where try db.tableExists(mirror.table) {
                known[mirror.collection.name] = Set(try db.columns(in: mirror.table).map(\.name))
            }
        } else {
            known = try JSONDecoder().decode([String: Set<String>].self, from: Data(value.utf8))
        }
        var missing: [String: [String]] = [:]
        for mirror in mirrors {
            guard let had = known[mirror.collection.name] else { continue }
            let fields = mirror.collection.fields.keys.filter { !had.contains($0) }.sorted()
            guard !fields.isEmpty else { continue }
            missing[mirror.collection.name] = fields
            known[mirror.collection.name] = had.union(fields)
        }
        try EngineSchema.setValue(String(decoding: try JSONEncoder.sorted.encode(known), as: UTF8.self), for: .keptGap, db)
        return missing
    }

    /// Forgets everything kept as a device that never kept would stand: what `mirrors` declare
    /// now is noted as known, so that the fields a later version adds are back filled.
    static func forgetAll(knowing mirrors: [TableMirror], _ db: Database) throws {
        try db.execute(sql: "DELETE FROM eventual_kept")
        let known = Dictionary(uniqueKeysWithValues: mirrors.map { ($0.collection.name, Set($0.collection.fields.keys)) })
        try EngineSchema.setValue(String(decoding: try JSONEncoder.sorted.encode(known), as: UTF8.self), for: .keptGap, db)
    }

    /// Whether anything is kept: a page of a device that keeps nothing then writes nothing here.
    static func isEmpty(_ db: Database) throws -> Bool {
        try !(Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM eventual_kept)") ?? false)
    }

    /// Whether anything of `collection` is kept.
    static func holds(_ collection: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM eventual_kept WHERE collection = ?)", arguments: [collection]) ?? false
    }

    /// Keeps what `record` holds beyond `declared` (nil: a collection this device does not mirror:
    /// all of it), replacing what was kept of it; forgets it when it holds nothing more or is deleted.
    /// `anyKept`: whether the table held anything before this page (else nothing is there to forget).
    static func keep(_ record: RemoteRecord, declared: SyncCollection?, anyKept: Bool, _ db: Database) throws {
        let extra = declared.map { collection in record.fields.filter { collection.fields[$0.key] == nil } } ?? record.fields
        guard !record.deleted, !extra.isEmpty else {
            if anyKept {
                try db.cachedStatement(sql: "DELETE FROM eventual_kept WHERE collection = ? AND record_id = ?")
                    .execute(arguments: [record.collection, record.recordID])
            }
            return
        }
        let fields = String(decoding: try JSONEncoder.sorted.encode(extra), as: UTF8.self)
        try db.cachedStatement(sql: """
            INSERT INTO eventual_kept (collection, record_id, fields, hlc, space, changed_by, whole) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (collection, record_id) DO UPDATE SET fields = excluded.fields, hlc = excluded.hlc, space = excluded.space,
                changed_by = excluded.changed_by, whole = excluded.whole
            """).execute(arguments: [record.collection, record.recordID, fields, record.hlc, record.space, record.changedBy, declared == nil])
    }

    /// Forgets what was kept of the records of `space` (the person left it), or of every record (a
    /// start over: every record comes again whole, and what it keeps from then on leaves no gap).
    static func forget(space: String?, _ db: Database) throws {
        if let space {
            try db.execute(sql: "DELETE FROM eventual_kept WHERE space = ?", arguments: [space])
        } else {
            try db.execute(sql: "DELETE FROM eventual_kept")
            try EngineSchema.setValue(nil, for: .keptGap, db)
        }
    }

    /// Puts into `mirror`'s table what is kept of its collection that it now declares, and keeps
    /// the rest; returns how many records it changed. Idempotent: what it folds is no longer
    /// kept. A field a change waiting on this device sets is the device's (it was made after the
    /// upgrade, so it knew the field); a record kept whole that the table lacks is added.
    @discardableResult
    static func fold(into mirror: TableMirror, _ db: Database) throws -> Int {
        let rows = try Row.fetchAll(db, sql: "SELECT * FROM eventual_kept WHERE collection = ?", arguments: [mirror.collection.name])
        guard !rows.isEmpty else { return 0 }
        let declared = mirror.collection.fields
        let pending = try OutboxTable.unacknowledgedEdits(collection: mirror.collection.name, recordIDs: rows.map { $0["record_id"] }, db: db)
        var folded = 0
        let decoder = JSONDecoder()
        for row in rows {
            let id: String = row["record_id"]
            let fields = try decoder.decode([String: SyncValue].self, from: Data((row["fields"] as String).utf8))
            let known = fields.filter { declared[$0.key] != nil }
            guard !known.isEmpty else { continue }
            let edits = pending[id] ?? PendingEdits()
            let record = RemoteRecord(collection: mirror.collection.name, recordID: id, fields: known, deleted: false, hlc: row["hlc"],
                                      space: row["space"], changedBy: row["changed_by"])
            let held = try mirror.fieldsOfRow(id, db) != nil
            if row["whole"] as Bool || held, !edits.deletes {
                try mirror.fold(record, pending: edits, in: db)
                folded += 1
            }
            let rest = fields.filter { declared[$0.key] == nil }
            if rest.isEmpty {
                try db.execute(sql: "DELETE FROM eventual_kept WHERE collection = ? AND record_id = ?", arguments: [mirror.collection.name, id])
            } else {
                try db.execute(sql: "UPDATE eventual_kept SET fields = ?, whole = 0 WHERE collection = ? AND record_id = ?",
                               arguments: [String(decoding: try JSONEncoder.sorted.encode(rest), as: UTF8.self), mirror.collection.name, id])
            }
        }
        return folded
    }
}
