import Foundation
import GRDB

/// What SQLite alone takes to write the rows a sync path wrote and to read them back: the floor
/// that path's time is put beside, as a ratio.
///
/// It copies the schema of a server's database (tables, then indexes and triggers) into a new
/// file with the server's pragmas (WAL, `synchronous = NORMAL`), then times writing there, in
/// one transaction and one prepared statement a table, the very rows the server holds for the
/// path, and reading them back in the order a pull reads them.
/// NB: no foreign keys are checked: the rows they point at are not copied, and the server's
/// checks are part of what a path costs, not of its floor.
public struct StorageFloor: Sendable {
    /// One table's rows: those whose `column` is `value`, read back ordered by `order`.
    public struct Rows: Sendable {
        public let table: String, column: String, value: String, order: String?

        public init(_ table: String, where column: String, is value: String, orderedBy order: String? = nil) {
            self.table = table
            self.column = column
            self.value = value
            self.order = order
        }
    }

    /// The rows written, and those of the first selection read back.
    public let written: Int, read: Int
    /// Seconds to write every selection's rows in one transaction, and to read back the first's.
    public let writeSeconds: Double, readSeconds: Double

    /// Measures the floor of `selections` of the server database at `serverDatabase`, in a scratch
    /// file in `folder`, removed after. NB: only once the server that had it open has stopped:
    /// the server's SQLite and GRDB's are two copies in one process, which do not share locks.
    public static func measure(serverDatabase: String, _ selections: [Rows], in folder: URL) throws -> StorageFloor {
        var readOnly = Configuration()
        readOnly.readonly = true
        let source = try DatabaseQueue(path: serverDatabase, configuration: readOnly)
        let (schema, copies) = try source.read { db in
            let schema = try String.fetchAll(db, sql: """
                SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'
                ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END
                """)
            let copies = try selections.map { selection in
                try Row.fetchAll(db, sql: "SELECT * FROM \(selection.table.quotedDatabaseIdentifier) WHERE \(selection.column.quotedDatabaseIdentifier) = ?",
                                 arguments: [selection.value])
            }
            return (schema, copies)
        }
        try source.close()

        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        configuration.prepareDatabase { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        let path = folder.appendingPathComponent("storage-floor-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let floor = try DatabaseQueue(path: path, configuration: configuration)
        try floor.write { db in for statement in schema { try db.execute(sql: statement) } }

        let writeStart = ContinuousClock.now
        try floor.write { db in
            for (selection, rows) in zip(selections, copies) {
                guard let columns = rows.first.map({ Array($0.columnNames) }) else { continue }
                let insert = try db.makeStatement(sql: """
                    INSERT INTO \(selection.table.quotedDatabaseIdentifier) (\(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")))
                    VALUES (\(databaseQuestionMarks(count: columns.count)))
                    """)
                for row in rows { try insert.execute(arguments: StatementArguments(Array(row.databaseValues))) }
            }
        }
        let writeSeconds = seconds(since: writeStart)

        // NB: every value is taken out of SQLite (a string's bytes counted), as a pull must.
        let readStart = ContinuousClock.now
        var read = 0, bytes = 0
        if let first = selections.first {
            try floor.read { db in
                let order = first.order.map { " ORDER BY \($0.quotedDatabaseIdentifier)" } ?? ""
                let rows = try Row.fetchCursor(db, sql: "SELECT * FROM \(first.table.quotedDatabaseIdentifier) WHERE \(first.column.quotedDatabaseIdentifier) = ?\(order)",
                                               arguments: [first.value])
                while let row = try rows.next() {
                    read += 1
                    for value in row.databaseValues {
                        switch value.storage {
                        case .string(let text): bytes += text.utf8.count
                        case .blob(let data): bytes += data.count
                        case .int64, .double: bytes += 8
                        case .null: break
                        }
                    }
                }
            }
        }
        let readSeconds = seconds(since: readStart)
        try floor.close()
        guard bytes > 0 || read == 0 else { throw BenchServerError(description: "the floor read \(read) rows and no bytes") }
        return StorageFloor(written: copies.map(\.count).reduce(0, +), read: read, writeSeconds: writeSeconds, readSeconds: readSeconds)
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
