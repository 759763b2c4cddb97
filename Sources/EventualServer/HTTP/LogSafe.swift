import EventualStorage
import Foundation
import Hummingbird
import OpenAPIRuntime

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
        case let refusal as Refusal:
            let outcome = ErrorMapping.outcome(for: refusal)
            return "\(outcome.status.code) \(outcome.message)"
        case let error as DecodingError:
            return "DecodingError at '\(codingPath(of: error))'"
        case let error as HTTPError:
            return "HTTPError \(error.status.code)"
        default:
            // The database's errors as the storage layer tells them; any other is named by its type.
            return StorageError.logSafeDescription(of: error)
        }
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
