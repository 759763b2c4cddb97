import EventualStorage
import Foundation
import Hummingbird
import Logging
import NIOCore
import OpenAPIRuntime

/// Turns anything a handler, the generated OpenAPI layer or the router throws into the status
/// and message the client sees. Client mistakes become 4xx with a precise message; only a
/// failure of the server itself becomes a 500.
enum ErrorMapping {
    struct Outcome {
        let status: HTTPResponse.Status
        let message: String
        /// True when the server itself failed and the error must be logged.
        let isServerFault: Bool
        /// Seconds for a `Retry-After` header (a 429 or a 503).
        var retryAfter: Int? = nil
        /// A word a program acts on (`not_uploaded`), for the refusals that have one.
        var code: String? = nil
        /// With `offset_mismatch`: the bytes the server has of the upload.
        var received: Int64? = nil
        /// The level the failure is logged at; nil for a client's mistake, which is only counted.
        var logLevel: Logger.Level? { isServerFault ? (retryAfter == nil ? .error : .warning) : nil }
    }

    static func outcome(for error: any Error) -> Outcome {
        if let availability = StorageAvailability(error) {
            return outcome(for: availability)
        }
        switch error {
        case let error as APIError:
            return Outcome(status: error.status, message: error.message, isServerFault: false, retryAfter: error.retryAfter)
        case let refusal as Refusal:
            return outcome(for: refusal)
        case let error as ServerError:
            if let decoding = decodingError(in: error.underlyingError), context(of: decoding).codingPath.isEmpty,
               [.get, .head, .delete].contains(error.request.method) {
                // NB: a request without a body fails to decode only in its parameters, and the runtime's
                // URI decoder reports no coding path; say so instead of blaming a 'body'.
                let query = error.request.path?.split(separator: "?", maxSplits: 1).dropFirst().first.map { " (\($0.prefix(200)))" } ?? ""
                return Outcome(status: .badRequest, message: "A query or path parameter is not of the documented type\(query)",
                               isServerFault: false)
            }
            return outcome(forOpenAPI: error.underlyingError, operation: error.operationID)
        case let error as DecodingError:
            return Outcome(status: .badRequest, message: describe(error), isServerFault: false)
        case let error as HTTPError:
            return Outcome(status: error.status, message: error.body ?? defaultMessage(for: error.status), isServerFault: error.status.code >= 500)
        case is NIOTooManyBytesError:
            // NB: a chunked body has no Content-Length to refuse up front; collecting it stops here.
            return Outcome(status: .contentTooLarge, message: defaultMessage(for: .contentTooLarge), isServerFault: false)
        default:
            return Outcome(status: .internalServerError, message: "Internal server error", isServerFault: true)
        }
    }

    private static func outcome(forOpenAPI underlying: any Error, operation: String) -> Outcome {
        if StorageAvailability(underlying) != nil { return outcome(for: underlying) }
        switch underlying {
        case is APIError, is Refusal, is DecodingError, is ServerError, is HTTPError, is NIOTooManyBytesError:
            return outcome(for: underlying)
        case let convertible as any HTTPResponseConvertible where convertible.httpStatus.code < 500:
            // NB: the runtime's own errors (a missing query parameter, a wrong content type) say
            // what is wrong; a DecodingError may hide inside one.
            if let decoding = decodingError(in: underlying) {
                return Outcome(status: .badRequest, message: describe(decoding), isServerFault: false)
            }
            return Outcome(status: convertible.httpStatus, message: String(describing: underlying), isServerFault: false)
        default:
            if let decoding = decodingError(in: underlying) {
                return Outcome(status: .badRequest, message: describe(decoding), isServerFault: false)
            }
            return Outcome(status: .internalServerError, message: "Internal server error", isServerFault: true)
        }
    }

    /// The status of each refusal a store throws: the one place that picks them.
    private static func outcome(for refusal: Refusal) -> Outcome {
        switch refusal {
        case .quotaExceeded(let message):
            return Outcome(status: .contentTooLarge, message: message, isServerFault: false)
        case .limitReached(let message, let retryAfter):
            return Outcome(status: .tooManyRequests, message: message, isServerFault: false, retryAfter: max(1, retryAfter))
        case .notFound(let message):
            return Outcome(status: .notFound, message: message, isServerFault: false)
        case .notTheOwner(let message), .notPermitted(let message):
            return Outcome(status: .forbidden, message: message, isServerFault: false)
        case .alreadyTaken(let message), .conflict(let message):
            return Outcome(status: .conflict, message: message, isServerFault: false)
        case .invalid(let message):
            return Outcome(status: .badRequest, message: message, isServerFault: false)
        case .gone(let message):
            return Outcome(status: .gone, message: message, isServerFault: false)
        case .upgradeRequired(let message):
            return Outcome(status: .conflict, message: message, isServerFault: false, code: "upgrade_required")
        case .overloaded(let message, let retryAfter):
            // NB: a refusal, not a failure of the server: answered like an APIError 503 always was.
            return Outcome(status: .serviceUnavailable, message: message, isServerFault: false, retryAfter: retryAfter)
        case .notUploaded(let message):
            return Outcome(status: .notFound, message: message, isServerFault: false, code: "not_uploaded")
        case .uploadNotBegun(let message):
            return Outcome(status: .notFound, message: message, isServerFault: false, code: "not_begun")
        case .offsetMismatch(let message, let received):
            return Outcome(status: .conflict, message: message, isServerFault: false, code: "offset_mismatch", received: received)
        case .unsupportedContent(let message):
            return Outcome(status: .unsupportedMediaType, message: message, isServerFault: false, code: "unsupported_type")
        case .digestMismatch(let message):
            return Outcome(status: .unprocessableContent, message: message, isServerFault: false, code: "hash_mismatch")
        case .rangeNotSatisfiable(let message):
            return Outcome(status: .rangeNotSatisfiable, message: message, isServerFault: false)
        }
    }

    /// A storage failure that passes with time is a 503 with `Retry-After` (clients retry 503),
    /// instead of a 500 that says the server is broken.
    private static func outcome(for availability: StorageAvailability) -> Outcome {
        switch availability {
        case .busy:
            return Outcome(status: .serviceUnavailable, message: "The database is busy with another writer; retry in a moment",
                           isServerFault: true, retryAfter: 1)
        case .full:
            return Outcome(status: .serviceUnavailable,
                           message: "The server's storage is full: changes cannot be saved right now (reading still works); retry later",
                           isServerFault: true, retryAfter: 30)
        case .unreachable:
            return Outcome(status: .serviceUnavailable, message: "The database cannot be reached right now; retry in a moment",
                           isServerFault: true, retryAfter: 5)
        }
    }

    /// Finds a DecodingError nested as an associated value (the runtime wraps them).
    private static func decodingError(in error: any Error) -> DecodingError? {
        if let decoding = error as? DecodingError { return decoding }
        for child in Mirror(reflecting: error).children {
            if let nested = child.value as? any Error, let found = decodingError(in: nested) { return found }
        }
        return nil
    }

    private static func context(of error: DecodingError) -> DecodingError.Context {
        switch error {
        case .keyNotFound(_, let context), .valueNotFound(_, let context), .typeMismatch(_, let context), .dataCorrupted(let context):
            return context
        @unknown default:
            return DecodingError.Context(codingPath: [], debugDescription: "")
        }
    }

    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let context):
            return "Missing field '\(path(context.codingPath + [key]))'"
        case .valueNotFound(let type, let context):
            return "Field '\(path(context.codingPath))' must be \(name(of: type)), not null"
        case .typeMismatch(let type, let context):
            return "Field '\(path(context.codingPath))' must be \(name(of: type))"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                if context.underlyingError != nil { return "The request body is not valid JSON" }
                // NB: Foundation reports a fraction sent for an integer field this way, with no field name.
                return "The request body is not valid JSON, or a number has the wrong type (a fraction for an integer)"
            }
            return "Field '\(path(context.codingPath))' is invalid: \(context.debugDescription)"
        @unknown default:
            return "The request body could not be read"
        }
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        let names = codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
        return names.isEmpty ? "body" : names.joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is Int.Type, is Int64.Type, is Int32.Type: return "an integer"
        case is Double.Type, is Float.Type: return "a number"
        case is String.Type: return "a string"
        case is Bool.Type: return "a boolean"
        default: return "of the documented type"
        }
    }

    static func defaultMessage(for status: HTTPResponse.Status) -> String {
        switch status {
        case .notFound: return "No such route"
        case .methodNotAllowed: return "Method not allowed on this route"
        case .contentTooLarge: return "The request body is larger than 1 MiB"
        default: return status.reasonPhrase
        }
    }
}
