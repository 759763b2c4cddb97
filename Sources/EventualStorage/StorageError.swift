import PostgresKit
import SQLiteNIO

/// A storage failure that is not the caller's fault: logged in full, never shown to a client.
public enum StorageError: Error, CustomStringConvertible {
    case cannotOpen(String)
    case corrupt(String)
    /// Another process held SQLite's write lock past the busy timeout a moment ago (`StorageAvailability.busy`).
    case busy

    public var description: String {
        switch self {
        case .cannotOpen(let reason): return "Cannot open the database: \(reason)"
        case .corrupt(let reason): return "Unexpected database content: \(reason)"
        case .busy: return "The database was locked by another process a moment ago"
        }
    }

    /// What a log may say of a storage error: never a bound value. Any other error is named by its type.
    ///
    /// NB: `String(reflecting:)` of `PSQLError` prints the query's bound values (token hashes,
    /// emails), and its detail line quotes them ("Key (email_key)=(…) already exists").
    public static func logSafeDescription(of error: any Error) -> String {
        switch error {
        case let error as SQLiteError:
            // SQLite's messages name tables, columns and constraints, never bound values.
            return "SQLite \(error.reason): \(error.message)"
        case let error as SQLiteWriteError:
            return error.description
        case let error as PSQLError:
            return describe(error)
        case let error as StorageError:
            return error.description
        case let error as SQLiteReadError:
            return error.description
        default:
            return String(describing: type(of: error))
        }
    }

    /// The code, SQL state and the names PostgreSQL reports (table, constraint), never its detail line.
    private static func describe(_ error: PSQLError) -> String {
        var parts = ["PostgreSQL \(error.code)"]
        if let state = error.serverInfo?[.sqlState] { parts.append("sqlState \(state)") }
        if let table = error.serverInfo?[.tableName] { parts.append("table \(table)") }
        if let constraint = error.serverInfo?[.constraintName] { parts.append("constraint \(constraint)") }
        return parts.joined(separator: ", ")
    }
}
