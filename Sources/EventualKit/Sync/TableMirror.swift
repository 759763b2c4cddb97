import EventualAPI
import GRDB

/// A synced collection mirrored in a table of the app's: a row per record, an `id` primary key and
/// one column per field, named as the field. Both halves of the mirror go through it, so that they
/// follow one rule for nulls, counters and statements:
/// - a person's change (`insert`, `update`, `delete`) is written to the row and queued for the
///   server in the caller's transaction: both happen or neither does;
/// - the server's state of a record (`apply`, called by the sync engine) is written to the row,
///   minding the local changes the server has not acknowledged yet.
///
/// Nulls: a null clears a field; a new record's null fields are not sent (they are empty on every
/// device already). Counters: a change sets a counter or adds to it; what is added is added to the
/// row too. Statements: every statement is cached per table and set of columns, so a page of
/// records or an import of many rows with the same fields prepares each statement once.
///
/// Spaces: the table of a collection in spaces (`SyncScope.space`) has two more columns that the
/// mirror writes: `space_id` (NULL for the person's own space) and `changed_by` (the username of
/// whoever the server last applied a change of, NULL while this device's own change waits).
public struct TableMirror: SyncedCollectionStore {
    public let collection: SyncCollection
    public let table: String

    public init(_ collection: SyncCollection, table: String) {
        self.collection = collection
        self.table = table
    }

    // MARK: - A person's changes

    /// Adds a record: its row (null fields included) and the change that creates it on the server,
    /// in `space` (nil: the person's own). Returns the id of the change's outbox entry.
    @discardableResult
    public func insert(_ id: String, _ fields: [String: SyncValue], space: String? = nil, in tx: LocalTransaction) throws -> String {
        try checkRules(merged: fields, previous: nil, in: tx)
        let space = try tx.spaceOfChange(space, collection)
        // NB: a new record's empty fields are empty on every device already: sending them as
        // nulls only makes each change (an imported bank year is 100,000 of them) larger.
        let entry = try record(id, fields: fields.filter { !$0.value.isNull }, space: space, creates: true, in: tx)
        try insertRow(id, fields, space: space, changedBy: nil, tx.db)
        return entry
    }

    /// Sets `fields` of a record (a null clears one) and adds `deltas` to its counter fields; a
    /// counter is set or added to in one change, not both (`Refusal.setAndAdded`). The change goes
    /// to the space the row is in. Returns the id of the change's outbox entry.
    @discardableResult
    public func update(_ id: String, setting fields: [String: SyncValue] = [:], adding deltas: [String: Double] = [:],
                       in tx: LocalTransaction) throws -> String {
        if let previous = try fieldsOfRow(id, tx.db) {
            var merged = previous.merging(fields) { $1 }
            for (name, amount) in deltas { merged[name] = .number((previous[name]?.doubleValue ?? 0) + amount) }
            try checkRules(merged: merged, previous: previous, in: tx)
        }
        let entry = try record(id, fields: fields, deltas: deltas, space: try spaceOfRow(id, tx.db), in: tx)
        let names = fields.keys.sorted(), counters = deltas.keys.sorted()
        let assignments = names.map { "\($0.quotedDatabaseIdentifier) = ?" }
            + counters.map { "\($0.quotedDatabaseIdentifier) = \($0.quotedDatabaseIdentifier) + ?" }
            + (isInSpaces ? ["changed_by = NULL"] : [])
        guard !fields.isEmpty || !deltas.isEmpty else { return entry }
        let sql = "UPDATE \(table.quotedDatabaseIdentifier) SET \(assignments.joined(separator: ", ")) WHERE id = ?"
        try tx.db.cachedStatement(sql: sql).execute(arguments: StatementArguments(
            names.map { fields[$0]!.databaseValue } + counters.map { deltas[$0]!.databaseValue } + [id.databaseValue]))
        return entry
    }

    /// Deletes a record on every device (of the space it is in); false (and nothing queued) when
    /// there is no such row.
    @discardableResult
    public func delete(_ id: String, in tx: LocalTransaction) throws -> Bool {
        let space = try spaceOfRow(id, tx.db)
        try deleteRow(id, tx.db)
        guard tx.db.changesCount > 0 else { return false }
        try record(id, deleted: true, space: space, in: tx)
        return true
    }

    /// The one place where a person's change is checked against its collection and queued.
    @discardableResult
    private func record(_ id: String, fields: [String: SyncValue] = [:], deltas: [String: Double] = [:], deleted: Bool = false,
                        space: String?, creates: Bool = false, in tx: LocalTransaction) throws -> String {
        // NB: the row would take the amount added and the server the value set: they would differ.
        if let both = deltas.keys.sorted().first(where: { fields[$0] != nil }) { throw Refusal.setAndAdded(field: both) }
        return try tx.recordChange(collection, id: id, fields: fields, adding: deltas, deleted: deleted, space: space, createsRecord: creates)
    }

    private var isInSpaces: Bool { collection.scope == .space }

    /// Refuses a write that breaks one of the collection's rules (or holds a number no record may
    /// hold, `SyncValue.holdable`), with the server's words, before
    /// anything is written or queued. A record another rule refers to is looked up in its
    /// collection's mirror on this device; a collection this device does not mirror is left to the server.
    private func checkRules(merged: [String: SyncValue], previous: [String: SyncValue]?, in tx: LocalTransaction) throws {
        let violation: SyncRuleViolation?
        do {
            violation = try collection.violation(merged: merged, previous: previous) { name, id in
                guard let table = name == collection.name ? table : tx.mirrors[name]?.table else { throw NotMirrored() }
                return try TableMirror.fields(of: id, in: table, tx.db)
            }
        } catch is NotMirrored {
            return
        }
        if let violation { throw Refusal.rule(violation) }
    }

    private struct NotMirrored: Error {}

    /// The fields of a record's row, as the rules read them; nil when there is no such row.
    func fieldsOfRow(_ id: String, _ db: Database) throws -> [String: SyncValue]? {
        try Self.fields(of: id, in: table, db).map { $0.filter { collection.fields[$0.key] != nil } }
    }

    private static func fields(of id: String, in table: String, _ db: Database) throws -> [String: SyncValue]? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM \(table.quotedDatabaseIdentifier) WHERE id = ?"),
                                         arguments: [id.databaseValue]) else { return nil }
        var fields: [String: SyncValue] = [:]
        for column in row.columnNames { fields[column] = SyncValue.fromDatabaseValue(row[column]) }
        return fields
    }

    /// The space of a record's row (nil: the person's own, or no such row).
    private func spaceOfRow(_ id: String, _ db: Database) throws -> String? {
        guard isInSpaces else { return nil }
        return try String.fetchOne(db.cachedStatement(sql: "SELECT space_id FROM \(table.quotedDatabaseIdentifier) WHERE id = ?"),
                                   arguments: [id.databaseValue])
    }

    /// A change the mirror refuses before writing anything.
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        /// A counter both set and added to in one change.
        case setAndAdded(field: String)
        /// A write that breaks one of the collection's rules: the server would refuse it with these words.
        case rule(SyncRuleViolation)

        public var description: String {
            switch self {
            case .setAndAdded(let field): return "'\(field)' is both set and added to in one change: set it, or add to it"
            case .rule(let violation): return violation.message
            }
        }
    }

    // MARK: - The server's state

    public func apply(_ record: RemoteRecord, pending: PendingEdits, in db: Database) throws {
        if record.deleted {
            guard isInSpaces else { return try deleteRow(record.recordID, db) }
            // NB: a record moved to another space is a tombstone in the one it left: the row, in
            // its new space already, stays.
            try db.cachedStatement(sql: "DELETE FROM \(table.quotedDatabaseIdentifier) WHERE id = ? AND space_id IS ?")
                .execute(arguments: [record.recordID.databaseValue, record.space.databaseValue])
            return
        }
        let names = record.fields.keys.filter { collection.fields[$0] != nil && !pending.fields.contains($0) }.sorted()
        guard !names.isEmpty else { return }
        var fields: [String: SyncValue] = [:]
        for name in names {
            let value = record.fields[name]!
            fields[name] = pending.deltas[name].map { .number((value.doubleValue ?? 0) + $0) } ?? value
        }
        // NB: update first: an upsert would check NOT NULL columns that a pending edit holds back.
        let columns = names.map(\.quotedDatabaseIdentifier) + (isInSpaces ? ["space_id", "changed_by"] : [])
        let update = "UPDATE \(table.quotedDatabaseIdentifier) SET \(columns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?"
        let spaceColumns = isInSpaces ? [record.space.databaseValue, record.changedBy.databaseValue] : []
        try db.cachedStatement(sql: update).execute(arguments: StatementArguments(
            names.map { fields[$0]!.databaseValue } + spaceColumns + [record.recordID.databaseValue]))
        guard db.changesCount == 0 else { return }
        try insertRow(record.recordID, fields, space: record.space, changedBy: record.changedBy, db)
    }

    /// Puts kept values of fields this version declares into the record's row (`KeptFields.fold`):
    /// a field a waiting change sets stays the device's; a record the table lacks is added.
    func fold(_ record: RemoteRecord, pending: PendingEdits, in db: Database) throws {
        let names = record.fields.keys.filter { collection.fields[$0] != nil && !pending.fields.contains($0) }.sorted()
        guard !names.isEmpty else { return }
        let update = "UPDATE \(table.quotedDatabaseIdentifier) SET \(names.map { "\($0.quotedDatabaseIdentifier) = ?" }.joined(separator: ", ")) WHERE id = ?"
        try db.cachedStatement(sql: update).execute(arguments: StatementArguments(
            names.map { record.fields[$0]!.databaseValue } + [record.recordID.databaseValue]))
        guard db.changesCount == 0 else { return }
        try insertRow(record.recordID, record.fields.filter { names.contains($0.key) }, space: record.space, changedBy: record.changedBy, db)
    }

    /// Whether the table, or a column of a field the collection declares, is missing.
    func lacksColumns(_ db: Database) throws -> Bool {
        guard try db.tableExists(table) else { return true }
        let existing = Set(try db.columns(in: table).map { $0.name.lowercased() })
        return collection.fields.keys.contains { !existing.contains($0.lowercased()) }
    }

    /// Adds a column for each field the collection declares that the table lacks (a new version of
    /// the app added it), with the field's default, and the table itself when there is none (a
    /// collection the new version added); returns the columns added. No app writes a migration for
    /// a new field or collection: the engine takes them up when it opens the table.
    @discardableResult
    func addMissingColumns(_ db: Database) throws -> [String] {
        guard try db.tableExists(table) else {
            let columns = ["id TEXT PRIMARY KEY NOT NULL"]
                + collection.fields.sorted(by: { $0.key < $1.key }).map { "\($0.key.quotedDatabaseIdentifier) \($0.value.columnDefinition)" }
                + (isInSpaces ? ["space_id TEXT", "changed_by TEXT"] : [])
            try db.execute(sql: "CREATE TABLE \(table.quotedDatabaseIdentifier) (\(columns.joined(separator: ", ")))")
            if isInSpaces {
                try db.execute(sql: """
                    CREATE INDEX \("\(table)_by_space".quotedDatabaseIdentifier) ON \(table.quotedDatabaseIdentifier) (space_id) WHERE space_id IS NOT NULL
                    """)
            }
            return [table]
        }
        let existing = Set(try db.columns(in: table).map { $0.name.lowercased() })
        var added: [String] = []
        for (name, field) in collection.fields.sorted(by: { $0.key < $1.key }) where !existing.contains(name.lowercased()) {
            try db.execute(sql: "ALTER TABLE \(table.quotedDatabaseIdentifier) ADD COLUMN \(name.quotedDatabaseIdentifier) \(field.columnDefinition)")
            added.append(name)
        }
        return added
    }

    public func deleteRecords(inSpace space: String, in db: Database) throws {
        guard isInSpaces else { return }
        try db.execute(sql: "DELETE FROM \(table.quotedDatabaseIdentifier) WHERE space_id = ?", arguments: [space])
    }

    public func heldRecords(inSpace space: String?, in db: Database) throws -> [(id: String, fields: [String: SyncValue])] {
        let names = collection.fields.keys.sorted()
        let columns = (["id"] + names).map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        // NB: a collection not in spaces lives in the person's own space only.
        guard isInSpaces || space == nil else { return [] }
        let condition = isInSpaces ? "WHERE space_id IS ?" : ""
        let rows = try Row.fetchAll(db, sql: "SELECT \(columns) FROM \(table.quotedDatabaseIdentifier) \(condition) ORDER BY id",
                                    arguments: isInSpaces ? [space] : [])
        return rows.compactMap { row in
            guard let id = row["id"] as String? else { return nil }
            var fields: [String: SyncValue] = [:]
            for name in names { fields[name] = SyncValue.fromDatabaseValue(row[name]) ?? .null }
            return (id, fields)
        }
    }

    public func hasRecords(in db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(table.quotedDatabaseIdentifier))") ?? false
    }

    public func deleteRecordsWithoutWaitingChanges(in db: Database) throws {
        try db.execute(sql: """
            DELETE FROM \(table.quotedDatabaseIdentifier) WHERE id NOT IN (
                SELECT record_id FROM eventual_outbox WHERE kind = 'change' AND operation = ? AND record_id IS NOT NULL)
            """, arguments: [collection.name])
    }

    // MARK: - Rows

    /// `space` and `changedBy` go to their columns in a collection in spaces (the others have none).
    private func insertRow(_ id: String, _ fields: [String: SyncValue], space: String?, changedBy: String?, _ db: Database) throws {
        let names = fields.keys.sorted()
        let spaceColumns = isInSpaces ? [("space_id", space.databaseValue), ("changed_by", changedBy.databaseValue)] : []
        let columns = (["id"] + names + spaceColumns.map(\.0)).map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        let marks = Array(repeating: "?", count: names.count + spaceColumns.count + 1).joined(separator: ", ")
        try db.cachedStatement(sql: "INSERT INTO \(table.quotedDatabaseIdentifier) (\(columns)) VALUES (\(marks))")
            .execute(arguments: StatementArguments([id.databaseValue] + names.map { fields[$0]!.databaseValue } + spaceColumns.map(\.1)))
    }

    private func deleteRow(_ id: String, _ db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM \(table.quotedDatabaseIdentifier) WHERE id = ?").execute(arguments: [id.databaseValue])
    }
}

extension SyncValue: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue {
        switch self {
        case .string(let text): return text.databaseValue
        case .integer(let whole): return whole.databaseValue
        case .number(let number): return number.databaseValue
        case .boolean(let flag): return flag.databaseValue
        case .null: return .null
        }
    }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> SyncValue? {
        switch value.storage {
        case .null: return .null
        case .int64(let whole): return .integer(whole)
        case .double(let number): return .number(number)
        case .string(let text): return .string(text)
        case .blob: return nil
        }
    }
}
