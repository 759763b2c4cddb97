import Foundation
import Hummingbird
import OpenAPIRuntime
import PostgresKit
import SQLiteNIO

/// What the log may say about an error: the operation and the kind of failure, never a header
/// value, a body, a password, a token or a key.
///
/// NB: `String(reflecting:)` of the OpenAPI runtime's `ServerError` prints the request's headers
/// (`authorization: Bearer …`) and its decoded body (`Credentials(email:…, password:…)`), and that
/// of `PSQLError` prints the query's bound values; neither may reach the log. Only errors whose
/// text we know to be free of client data are described; any other error is named by its type.
enum LogSafe {
    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as ServerError:
            return "operation \(error.operationID): \(describe(error.underlyingError))"
        case let error as APIError:
            return "\(error.status.code) \(error.message)"
        case let error as SQLiteError:
            // SQLite's messages name tables, columns and constraints, never bound values.
            return "SQLite \(error.reason): \(error.message)"
        case let error as SQLiteWriteError:
            return error.description
        case let error as PSQLError:
            return describe(error)
        case let error as DecodingError:
            return "DecodingError at '\(codingPath(of: error))'"
        case let error as HTTPError:
            return "HTTPError \(error.status.code)"
        case let error as StorageError:
            return error.description
        case let error as SQLiteReadError:
            return error.description
        default:
            return String(describing: type(of: error))
        }
    }

    /// The code, SQL state and the names PostgreSQL reports (table, constraint), never its detail
    /// line, which quotes values ("Key (email_key)=(…) already exists").
    private static func describe(_ error: PSQLError) -> String {
        var parts = ["PostgreSQL \(error.code)"]
        if let state = error.serverInfo?[.sqlState] { parts.append("sqlState \(state)") }
        if let table = error.serverInfo?[.tableName] { parts.append("table \(table)") }
        if let constraint = error.serverInfo?[.constraintName] { parts.append("constraint \(constraint)") }
        return parts.joined(separator: ", ")
    }

    private static func codingPath(of error: DecodingError) -> String {
        let context: DecodingError.Context
        switch error {
        case .keyNotFound(_, let c), .valueNotFound(_, let c), .typeMismatch(_, let c), .dataCorrupted(let c): context = c
        @unknown default: return "?"
        }
        return context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}
