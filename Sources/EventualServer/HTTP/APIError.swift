import Foundation
import HTTPTypes

/// A refusal the client can act on: answered with its status and `{"statusCode", "error", "message"}`.
public struct APIError: Error, Equatable, CustomStringConvertible {
    public let status: HTTPResponse.Status
    public let message: String
    /// Seconds for a `Retry-After` header, for a refusal that passes with time (429, 503).
    public let retryAfter: Int?

    public init(_ status: HTTPResponse.Status, _ message: String, retryAfter: Int? = nil) {
        self.status = status
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String { "\(status.code) \(message)" }

    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, message) }
    static func unauthorized(_ message: String = "Missing, expired or revoked access token") -> APIError {
        APIError(.unauthorized, message)
    }
    static func forbidden(_ message: String) -> APIError { APIError(.forbidden, message) }
    static func notFound(_ message: String) -> APIError { APIError(.notFound, message) }
    static func conflict(_ message: String) -> APIError { APIError(.conflict, message) }
    static func tooManyRequests(_ message: String, retryAfter: Int) -> APIError {
        APIError(.tooManyRequests, message, retryAfter: max(1, retryAfter))
    }
    static func contentTooLarge(_ message: String) -> APIError { APIError(.contentTooLarge, message) }
}

/// The JSON shape of every error answer, as the course web service used it.
struct ErrorBody: Codable, Equatable {
    let statusCode: Int
    let error: String
    let message: String
    /// For the refusals a program acts on (see `ErrorMapping.Outcome.code`); left out when nil.
    let code: String?
    /// With `offset_mismatch`: where the upload stands; left out when nil.
    let received: Int64?

    init(status: HTTPResponse.Status, message: String, code: String? = nil, received: Int64? = nil) {
        self.statusCode = status.code
        self.error = status.reasonPhrase.isEmpty ? "Error" : status.reasonPhrase
        self.message = message
        self.code = code
        self.received = received
    }
}
