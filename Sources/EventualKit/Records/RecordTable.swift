import EventualAPI
import GRDB
import Synchronization

/// A synced collection's table, written and read as values of its record type: an insert takes
/// a record, an update a closure that changes one, a counter is added to through its key path.
/// Each write is the mirror's (`TableMirror`): the row and its change in the caller's
/// transaction, the collection's rules checked on the device first. The engine syncs the mirror
/// (`SyncEngine(collections: [table.mirror])`).
///
/// An update sends the fields the closure changed, compared with the row as it stands in the
/// transaction (as GRDB's `updateChanges` writes only changed columns): setting a field to the
/// value it has is no change.
///
/// At its first use the table checks that the record holds to its collection and its table
/// (`SyncRecord.checkShape`): a record without a field would lose it at each move, so a table that
/// does not fit throws `RecordShapeError` before anything is written, never crashes.
public struct RecordTable<Record: SyncRecord>: Sendable {
    public let mirror: TableMirror
    public var collection: SyncCollection { mirror.collection }
    private let shape = ShapeChecked()

    /// The table `table` (by default, named as the collection: as `LocalMigration.table(for:)` makes it).
    public init(table: String = Record.collection.name) {
        mirror = TableMirror(Record.collection, table: table)
    }

    // MARK: - Writes

    /// Adds `record` (in `space`, nil: the person's own). Returns the id of its change's outbox entry.
    @discardableResult
    public func insert(_ record: Record, space: String? = nil, in tx: LocalTransaction) throws -> String {
        try checkShape(tx.db)
        return try mirror.insert(record.id, try record.syncFields(), space: space, in: tx)
    }

    /// Changes the record `id` as `change` says, and sends the fields it changed; nil (and
    /// nothing queued) when there is no such row. Returns the record as changed.
    @discardableResult
    public func update(_ id: String, in tx: LocalTransaction, _ change: (inout Record) throws -> Void) throws -> Record? {
        try write(id, adding: nil, in: tx, change)
    }

    /// Adds `amount` to the counter at `counter` of the record `id` (what every device adds is
    /// added up on the server), with the other changes `change` makes; nil when there is no such row.
    @discardableResult
    public func add(_ amount: Double, to counter: WritableKeyPath<Record, Double>, of id: String, in tx: LocalTransaction,
                    _ change: (inout Record) throws -> Void = { _ in }) throws -> Record? {
        try write(id, adding: (amount, counter), in: tx, change)
    }

    /// Moves `record` to `space` (nil: the person's own): deleted from the space it is in, created
    /// whole in the other, in one transaction (a record's space is where it was created).
    public func move(_ record: Record, to space: String?, in tx: LocalTransaction) throws {
        try checkShape(tx.db)
        try mirror.delete(record.id, in: tx)
        try mirror.insert(record.id, try record.syncFields(), space: space, in: tx)
    }

    /// Deletes the record on every device of its space; false (and nothing queued) when there is no such row.
    @discardableResult
    public func delete(_ id: String, in tx: LocalTransaction) throws -> Bool {
        try checkShape(tx.db)
        return try mirror.delete(id, in: tx)
    }

    // MARK: - Reads

    /// The record `id`, nil when there is none.
    public func record(_ id: String, _ db: Database) throws -> Record? {
        try checkShape(db)
        return try Record.fetchOne(db, sql: "SELECT * FROM \(mirror.table.quotedDatabaseIdentifier) WHERE id = ?", arguments: [id])
    }

    // MARK: - Parts

    private func write(_ id: String, adding delta: (amount: Double, counter: WritableKeyPath<Record, Double>)?, in tx: LocalTransaction,
                       _ change: (inout Record) throws -> Void) throws -> Record? {
        guard let before = try record(id, tx.db) else { return nil }
        var after = before
        try change(&after)
        let old = try before.syncFields()
        let fields = try after.syncFields().filter { old[$0.key] != $0.value }
        var deltas: [String: Double] = [:]
        if let delta {
            let name = try Self.field(at: delta.counter, of: before)
            deltas[name] = delta.amount
            // NB: a counter the closure also set stays in `fields`: the mirror refuses set and added in one change.
            if fields[name] == nil { after[keyPath: delta.counter] = before[keyPath: delta.counter] + delta.amount }
        }
        guard !fields.isEmpty || !deltas.isEmpty else { return after }
        try mirror.update(id, setting: fields, adding: deltas, in: tx)
        return after
    }

    /// The name of the field a key path of the record is, found by changing it on a copy.
    private static func field(at counter: WritableKeyPath<Record, Double>, of record: Record) throws -> String {
        var moved = record
        moved[keyPath: counter] = record[keyPath: counter] == 1 ? 2 : 1
        let before = try record.syncFields(), after = try moved.syncFields()
        guard let name = after.first(where: { before[$0.key] != $0.value })?.key else {
            throw RecordShapeError.notAField(record: "\(Record.self)", keyPath: "\(counter)")
        }
        return name
    }

    /// Checks the record against its collection and table once (`SyncRecord.checkShape`).
    private func checkShape(_ db: Database) throws {
        guard !shape.done.withLock({ $0 }) else { return }
        try Record.checkShape(table: mirror.table, db)
        shape.done.withLock { $0 = true }
    }
}

/// Whether a table's record was found to fit: shared by the copies of a `RecordTable`.
private final class ShapeChecked: Sendable {
    let done = Mutex(false)
}
