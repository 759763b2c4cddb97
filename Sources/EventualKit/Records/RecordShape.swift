import EventualAPI
import GRDB

/// Why a record type does not hold to its collection or its table: told by a table at its first
/// use, before anything is written, and by each app's test over its records.
public enum RecordShapeError: Error, Equatable, CustomStringConvertible {
    /// Fields of the collection that the record has no coding key for: a move or a read would lose them.
    case missingFields(record: String, collection: String, fields: [String])
    /// Coding keys that are no field of the collection nor a column the engine writes: never synced.
    case unknownKeys(record: String, collection: String, keys: [String])
    /// A key path given as a field (a counter's) that is none of the record's fields.
    case notAField(record: String, keyPath: String)
    /// No such table in the person's database: its migration is missing from the store's list.
    case noTable(String)
    /// Columns the table lacks for the record's keys or the engine's own (`id`, `space_id`, `changed_by`).
    case missingColumns(table: String, columns: [String])

    public var description: String {
        switch self {
        case .missingFields(let record, let collection, let fields):
            return "\(record) has no property for the field(s) \(fields.joined(separator: ", ")) of \(collection): give it one under each name"
        case .unknownKeys(let record, let collection, let keys):
            return "\(record) codes \(keys.joined(separator: ", ")), which \(collection) does not have: declare the field in EventualAPI, or drop the key"
        case .notAField(let record, let keyPath): return "\(keyPath) is not a field of \(record)"
        case .noTable(let table): return "There is no table \(table): add its migration to the store's"
        case .missingColumns(let table, let columns):
            return "The table \(table) has no column \(columns.joined(separator: ", ")): add it in a new migration"
        }
    }
}

extension SyncRecord {
    /// The columns the engine writes besides the fields: `id`, and for a collection in spaces the
    /// row's space and who changed it last (`TableMirror`).
    static var engineColumns: [String] { Self.collection.scope == .space ? ["id", "space_id", "changed_by"] : ["id"] }

    /// Checks that the record's coding keys are its collection's fields plus some of the engine's
    /// columns (`id` may be computed, as a budget's is), and that `table` has a column for each
    /// field and each engine column; throws `RecordShapeError` otherwise.
    public static func checkShape(table: String, _ db: Database) throws {
        try checkKeys()
        guard try db.tableExists(table) else { throw RecordShapeError.noTable(table) }
        let columns = Set(try db.columns(in: table).map(\.name))
        let wanted = Set(Self.collection.fields.keys).union(engineColumns).union(CodingKeys.allCases.map(\.stringValue))
        let missing = wanted.subtracting(columns)
        guard missing.isEmpty else { throw RecordShapeError.missingColumns(table: table, columns: missing.sorted()) }
    }

    /// The half of `checkShape` that needs no table: the coding keys against the collection.
    static func checkKeys() throws {
        let keys = Set(CodingKeys.allCases.map(\.stringValue)), fields = Set(Self.collection.fields.keys)
        let missing = fields.subtracting(keys)
        guard missing.isEmpty else {
            throw RecordShapeError.missingFields(record: "\(Self.self)", collection: Self.collection.name, fields: missing.sorted())
        }
        let unknown = keys.subtracting(fields).subtracting(engineColumns)
        guard unknown.isEmpty else {
            throw RecordShapeError.unknownKeys(record: "\(Self.self)", collection: Self.collection.name, keys: unknown.sorted())
        }
    }
}
