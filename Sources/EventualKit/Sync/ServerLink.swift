import AsyncHTTPClient
import EventualAPI
import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import Synchronization

/// The engine's way to the server: the client generated from `openapi.yaml`, with the
/// signed-in user's bearer token and a deadline on every request.
///
/// It fails fast, so that "offline" is known in moments rather than at a request's deadline: a
/// refused connection fails at once (no retrying the connection until the deadline), a
/// connection that does not open fails after `Timeouts.connect`, and a server that accepts the
/// connection but sends nothing fails after `Timeouts.firstByte`.
public struct ServerLink: Sendable {
    /// The generated client. Apps call knowledge-base endpoints through it.
    public let client: Client
    public let serverURL: URL
    private let transport: AsyncHTTPClientTransport
    private let middlewares: [any ClientMiddleware]

    /// How long a request may wait at each step.
    public struct Timeouts: Sendable, Hashable {
        /// To open the TCP connection.
        public var connect: Duration
        /// From sending a request (or the last byte received) to the next byte of the answer.
        public var firstByte: Duration

        public init(connect: Duration = .seconds(3), firstByte: Duration = .seconds(5)) {
            self.connect = connect
            self.firstByte = firstByte
        }
    }

    /// - Parameters:
    ///   - timeout: the deadline of one whole request, connection included.
    ///   - timeouts: the deadlines of its steps; requests with the same ones share an HTTP client.
    public init(
        serverURL: URL,
        timeout: Duration = .seconds(30),
        timeouts: Timeouts = Timeouts(),
        middlewares: [any ClientMiddleware] = [],
        accessToken: @escaping @Sendable () -> String?
    ) {
        let transport = AsyncHTTPClientTransport(configuration: .init(client: HTTPClients.shared(for: timeouts),
                                                                      timeout: .milliseconds(timeout.milliseconds)))
        self.serverURL = serverURL
        self.transport = transport
        self.middlewares = [TransportFailureMiddleware(serverURL: serverURL, timeouts: timeouts),
                            BearerMiddleware(accessToken: accessToken)] + middlewares
        self.client = Client(
            serverURL: serverURL,
            configuration: .init(dateTranscoder: MillisecondDateTranscoder()),
            transport: transport,
            middlewares: self.middlewares
        )
    }

    /// Sends a request whose body is already JSON through the same middlewares and transport as
    /// the generated client (bearer token, fast failures), and collects the answer's body.
    func send(_ method: HTTPRequest.Method, _ path: String, json body: Data?, operationID: String,
              maxAnswerBytes: Int = 64 * 1024 * 1024) async throws -> (HTTPResponse, Data) {
        var request = HTTPRequest(method: method, scheme: nil, authority: nil, path: path)
        request.headerFields[.accept] = "application/json"
        if body != nil { request.headerFields[.contentType] = "application/json; charset=utf-8" }
        let transport = self.transport
        var next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?) = { request, body, url in
            try await transport.send(request, body: body, baseURL: url, operationID: operationID)
        }
        for middleware in middlewares.reversed() {
            let tail = next
            next = { request, body, url in
                try await middleware.intercept(request, body: body, baseURL: url, operationID: operationID, next: tail)
            }
        }
        let (response, answer) = try await next(request, body.map { HTTPBody($0) }, serverURL)
        guard let answer else { return (response, Data()) }
        return (response, try await Data(collecting: answer, upTo: maxAnswerBytes))
    }
}

/// One HTTP client per set of timeouts, for the life of the process.
///
/// NB: an `HTTPClient` must be shut down before it is released; these never are, so they live
/// in a process-wide table like `HTTPClient.shared` does.
enum HTTPClients {
    private static let clients = Mutex<[ServerLink.Timeouts: HTTPClient]>([:])

    static func shared(for timeouts: ServerLink.Timeouts) -> HTTPClient {
        clients.withLock { clients in
            if let client = clients[timeouts] { return client }
            var configuration = HTTPClient.Configuration()
            configuration.timeout = .init(connect: .milliseconds(timeouts.connect.milliseconds),
                                          read: .milliseconds(timeouts.firstByte.milliseconds))
            // NB: by default a refused connection is retried with backoff until the request's
            // deadline; a phone in a basement should hear "offline" at once instead.
            configuration.connectionPool.retryConnectionEstablishment = false
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[timeouts] = client
            return client
        }
    }
}

/// Turns the transport's errors into `RemoteFailure.unreachable` with words a person can act on.
struct TransportFailureMiddleware: ClientMiddleware {
    let serverURL: URL
    let timeouts: ServerLink.Timeouts

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let answer: (HTTPResponse, HTTPBody?)
        do {
            answer = try await next(request, body, baseURL)
        } catch let error as HTTPClientError {
            throw RemoteFailure.unreachable(Self.describe(error, server: serverURL.absoluteString, timeouts: timeouts))
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            let reason = Self.isRefused(error) ? "connection refused" : String(describing: error)
            throw RemoteFailure.unreachable("No connection to \(serverURL.absoluteString) (\(reason))")
        }
        // NB: an Eventual server answers every error in JSON. Anything else (a web server's 404
        // page, a captive portal, a proxy's 502) is not an answer about this request: retry later,
        // and never mark an outbox entry failed because of it.
        let (response, _) = answer
        if response.status.code >= 400, !(response.headerFields[.contentType] ?? "").lowercased().contains("json") {
            throw RemoteFailure.unreachable("Not an Eventual server at \(serverURL.absoluteString) (it answered HTTP \(response.status.code))")
        }
        return answer
    }

    static func describe(_ error: HTTPClientError, server: String, timeouts: ServerLink.Timeouts) -> String {
        switch error {
        case .readTimeout:
            return "The server at \(server) accepted the connection but did not answer in \(seconds(timeouts.firstByte))"
        case .connectTimeout:
            return "No connection to \(server) within \(seconds(timeouts.connect))"
        case .deadlineExceeded:
            return "The server at \(server) did not finish answering in time"
        case .remoteConnectionClosed:
            return "The server at \(server) closed the connection"
        default:
            return "No connection to \(server) (\(error))"
        }
    }

    private static func isRefused(_ error: any Error) -> Bool {
        "\(error)".localizedCaseInsensitiveContains("connection refused")
    }

    private static func seconds(_ duration: Duration) -> String {
        let millis = duration.milliseconds
        return millis % 1000 == 0 ? "\(millis / 1000) s" : "\(Double(millis) / 1000) s"
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
    /// The server could not be reached, or the answer was lost: retry with backoff. The text is a
    /// whole sentence for people ("The server at … accepted the connection but did not answer in 5 s").
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
            return .unreachable("The server could not be reached (\(describe(clientError.underlyingError)))")
        }
        return .unreachable("The server could not be reached (\(describe(error)))")
    }


    public var description: String {
        switch self {
        case .unreachable(let reason): return reason
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

extension RemoteFailure {
    /// A failure from an error answer's status and body (our error shape says why).
    static func answer(_ statusCode: Int, _ body: Data) -> RemoteFailure {
        let message = (try? JSONDecoder().decode(Components.Schemas._Error.self, from: body))?.message ?? "HTTP \(statusCode)"
        return .status(statusCode, message: message)
    }
}

/// Turns an undocumented answer of the generated client into a failure.
func remoteFailure(_ statusCode: Int, _ payload: UndocumentedPayload) async -> RemoteFailure {
    var body = Data()
    if let stream = payload.body, let data = try? await Data(collecting: stream, upTo: 64 * 1024) { body = data }
    return .answer(statusCode, body)
}
