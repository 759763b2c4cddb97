import EventualAPI
import GRDB

extension LocalMigration {
    /// The migration that makes `Record`'s table from its collection, so that an app declares its
    /// fields once (in EventualAPI) and writes no `CREATE TABLE`: `id` the primary key, a column
    /// per field named as the field (`SyncField.columnDefinition`), and for a collection in spaces
    /// the `space_id` and `changed_by` the mirror writes, with the space indexed; then `indexes`.
    ///
    /// NB: shipped migrations are never edited, yet this one's SQL follows the collection. It is
    /// safe because it makes what is missing and nothing else: on a table that exists it adds the
    /// columns of fields declared since. A field added later comes with a new migration, `table(for:)`
    /// again under a new name: a device that ran the first one before the field existed gets the
    /// column then, and a new device gets it from the first and finds nothing left to add.
    public static func table<Record: SyncRecord>(for record: Record.Type, named name: String,
                                                 table: String = Record.collection.name,
                                                 indexes: [[Record.CodingKeys]] = []) -> LocalMigration {
        LocalMigration(name) { db in
            try Record.checkKeys()
            let fields = Record.collection.fields
            // The record's order, for a schema that reads as the record does.
            let names = Record.CodingKeys.allCases.map(\.stringValue).filter { fields[$0] != nil }
            var columns = names.map { ($0, fields[$0]!.columnDefinition) }
            if Record.collection.scope == .space { columns += [("space_id", "TEXT"), ("changed_by", "TEXT")] }
            let quoted = table.quotedDatabaseIdentifier
            if try db.tableExists(table) {
                let existing = Set(try db.columns(in: table).map(\.name))
                for (column, definition) in columns where !existing.contains(column) {
                    try db.execute(sql: "ALTER TABLE \(quoted) ADD COLUMN \(column.quotedDatabaseIdentifier) \(definition)")
                }
            } else {
                let definitions = ["id TEXT PRIMARY KEY NOT NULL"] + columns.map { "\($0.0.quotedDatabaseIdentifier) \($0.1)" }
                try db.execute(sql: "CREATE TABLE \(quoted) (\n    \(definitions.joined(separator: ",\n    "))\n)")
            }
            if Record.collection.scope == .space {
                try db.execute(sql: """
                    CREATE INDEX IF NOT EXISTS \("\(table)_by_space".quotedDatabaseIdentifier) ON \(quoted) (space_id) WHERE space_id IS NOT NULL
                    """)
            }
            for index in indexes where !index.isEmpty {
                let keys = index.map(\.stringValue)
                try db.execute(sql: """
                    CREATE INDEX IF NOT EXISTS \("\(table)_by_\(keys.joined(separator: "_"))".quotedDatabaseIdentifier) \
                    ON \(quoted) (\(keys.map(\.quotedDatabaseIdentifier).joined(separator: ", ")))
                    """)
            }
        }
    }
}

extension SyncField {
    /// The column that holds the field: TEXT for text and days, INTEGER for whole numbers and
    /// flags, REAL for numbers and counters. A field that cannot be null has a default, as every
    /// app's table has: a pulled record may arrive before a field that a pending local edit holds back.
    /// A field with a default (`SyncField.defaultValue`) has it as the column's: a record stored
    /// before a new version added the field holds it, as the server says it does.
    var columnDefinition: String {
        let (type, empty): (String, String) = switch self.type {
        case .string: ("TEXT", "''")
        case .date: ("TEXT", "'1970-01-01'")
        case .integer, .boolean: ("INTEGER", "0")
        case .number, .counter: ("REAL", "0")
        }
        let declared: String? = switch defaultValue {
        case .string(let text)?: "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .integer(let number)?: String(number)
        case .number(let number)?: number.isFinite ? "\(number)" : nil
        case .boolean(let flag)?: flag ? "1" : "0"
        case .null?, nil: nil
        }
        if let declared { return nullable ? "\(type) DEFAULT \(declared)" : "\(type) NOT NULL DEFAULT \(declared)" }
        return nullable ? type : "\(type) NOT NULL DEFAULT \(empty)"
    }
}
