import AsyncHTTPClient
import EventualAPI
import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime

/// The engine's way to the server: the client generated from `openapi.yaml`, with the
/// signed-in user's bearer token and a deadline on every request.
public struct ServerLink: Sendable {
    /// The generated client. Apps call knowledge-base endpoints through it.
    public let client: Client
    public let serverURL: URL

    /// - Parameters:
    ///   - accessToken: read before every request, so a new sign-in takes effect at once.
    ///   - timeout: the deadline of one request, connection included.
    public init(
        serverURL: URL,
        timeout: Duration = .seconds(10),
        httpClient: HTTPClient = .shared,
        middlewares: [any ClientMiddleware] = [],
        accessToken: @escaping @Sendable () -> String?
    ) {
        let transport = AsyncHTTPClientTransport(configuration: .init(client: httpClient, timeout: .milliseconds(timeout.milliseconds)))
        self.serverURL = serverURL
        self.client = Client(
            serverURL: serverURL,
            configuration: .init(dateTranscoder: MillisecondDateTranscoder()),
            transport: transport,
            middlewares: [BearerMiddleware(accessToken: accessToken)] + middlewares
        )
    }
}

/// Adds `Authorization: Bearer …` to every request when a token is known.
struct BearerMiddleware: ClientMiddleware {
    let accessToken: @Sendable () -> String?

    /// A token to use instead, within one task (right after a login, before it is saved).
    @TaskLocal static var tokenOverride: String?

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if request.headerFields[.authorization] == nil, let token = Self.tokenOverride ?? accessToken() {
            request.headerFields[.authorization] = "Bearer \(token)"
        }
        return try await next(request, body, baseURL)
    }
}

/// Why a request to the server did not succeed, sorted by what the engine does about it.
public enum RemoteFailure: Error, Equatable, CustomStringConvertible {
    /// The server could not be reached, or the answer was lost: retry with backoff.
    case unreachable(String)
    /// 408, 409, 429 or 5xx: retry with backoff.
    case transient(status: Int, message: String)
    /// Any other 4xx: the server refuses this for good. Shown to the user.
    case rejected(status: Int, message: String)
    /// 401: the access token expired or was revoked; sync waits for a new sign-in.
    case unauthorized(String)

    /// Sorts an HTTP status other than success.
    public static func status(_ code: Int, message: String) -> RemoteFailure {
        switch code {
        case 401: return .unauthorized(message)
        case 408, 409, 429, 500...: return .transient(status: code, message: message)
        default: return .rejected(status: code, message: message)
        }
    }

    /// Sorts an error thrown by the generated client: a transport failure unless it carries an answer.
    public static func from(_ error: any Error) -> RemoteFailure {
        if let failure = error as? RemoteFailure { return failure }
        if let clientError = error as? ClientError {
            if let failure = clientError.underlyingError as? RemoteFailure { return failure }
            if let status = clientError.response?.status.code, status >= 400 {
                return .status(status, message: "\(clientError.underlyingError)")
            }
            return .unreachable(describe(clientError.underlyingError))
        }
        return .unreachable(describe(error))
    }

    var isTransportFailure: Bool { if case .unreachable = self { return true } else { return false } }

    public var description: String {
        switch self {
        case .unreachable(let reason): return "The server could not be reached (\(reason))"
        case .transient(let status, let message): return "The server is busy or failing (\(status)): \(message)"
        case .rejected(_, let message): return message
        case .unauthorized(let message): return "Sign in again: \(message)"
        }
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError { return "\(error)" }
        return String(describing: error)
    }
}

extension Components.Schemas._Error {
    var failure: RemoteFailure { .status(statusCode, message: message) }
}

/// Turns an undocumented answer into a failure (its body, if JSON in our error shape, says why).
func remoteFailure(_ statusCode: Int, _ payload: UndocumentedPayload) async -> RemoteFailure {
    var message = "HTTP \(statusCode)"
    if let body = payload.body, let data = try? await Data(collecting: body, upTo: 64 * 1024),
       let error = try? JSONDecoder().decode(Components.Schemas._Error.self, from: data) {
        message = error.message
    }
    return .status(statusCode, message: message)
}
