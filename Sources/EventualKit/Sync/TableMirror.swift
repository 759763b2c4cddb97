import EventualAPI
import GRDB

/// The usual way to mirror a synced collection: a table with an `id` primary key and one
/// column per field, named as the field. A deleted record's row is deleted.
public struct TableMirror: SyncedCollectionStore {
    public let collection: SyncCollection
    public let table: String

    public init(_ collection: SyncCollection, table: String) {
        self.collection = collection
        self.table = table
    }

    public func apply(_ record: RemoteRecord, pending: PendingEdits, in db: Database) throws {
        let table = self.table.quotedDatabaseIdentifier
        if record.deleted {
            try db.cachedStatement(sql: "DELETE FROM \(table) WHERE id = ?").execute(arguments: [record.recordID])
            return
        }
        let names = record.fields.keys.filter { collection.fields[$0] != nil && !pending.fields.contains($0) }.sorted()
        guard !names.isEmpty else { return }
        let values = names.map { name -> DatabaseValue in
            let value = record.fields[name]!
            guard let local = pending.deltas[name] else { return value.databaseValue }
            return SyncValue.number((value.doubleValue ?? 0) + local).databaseValue
        }
        // NB: cached statements per set of columns: a page of records with the same fields reuses
        // them. Update first: an upsert would check NOT NULL columns that a pending edit holds back.
        let columns = names.map(\.quotedDatabaseIdentifier)
        let update = "UPDATE \(table) SET \(columns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?"
        try db.cachedStatement(sql: update).execute(arguments: StatementArguments(values + [record.recordID.databaseValue]))
        guard db.changesCount == 0 else { return }
        let insert = "INSERT INTO \(table) (id, \(columns.joined(separator: ", "))) VALUES (?\(String(repeating: ", ?", count: names.count)))"
        try db.cachedStatement(sql: insert).execute(arguments: StatementArguments([record.recordID.databaseValue] + values))
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
