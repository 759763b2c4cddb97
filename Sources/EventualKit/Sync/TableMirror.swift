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

    public func apply(_ record: RemoteRecord, keeping localFields: Set<String>, in db: Database) throws {
        if record.deleted {
            try db.execute(sql: "DELETE FROM \(table.quotedDatabaseIdentifier) WHERE id = ?", arguments: [record.recordID])
            return
        }
        let names = record.fields.keys.filter { collection.fields[$0] != nil && !localFields.contains($0) }.sorted()
        let exists = try Bool.fetchOne(db, sql: "SELECT 1 FROM \(table.quotedDatabaseIdentifier) WHERE id = ?",
                                       arguments: [record.recordID]) ?? false
        let values = names.map { record.fields[$0]!.databaseValue }
        if exists {
            guard !names.isEmpty else { return }
            let assignments = names.map { "\($0.quotedDatabaseIdentifier) = ?" }.joined(separator: ", ")
            try db.execute(sql: "UPDATE \(table.quotedDatabaseIdentifier) SET \(assignments) WHERE id = ?",
                           arguments: StatementArguments(values + [record.recordID.databaseValue]))
        } else {
            let columns = (["id"] + names).map(\.quotedDatabaseIdentifier).joined(separator: ", ")
            let marks = Array(repeating: "?", count: names.count + 1).joined(separator: ", ")
            try db.execute(sql: "INSERT INTO \(table.quotedDatabaseIdentifier) (\(columns)) VALUES (\(marks))",
                           arguments: StatementArguments([record.recordID.databaseValue] + values))
        }
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
