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
///
/// Its deadlines are on silence, not on time taken: a request that still moves bytes (a photo
/// on a slow link, a first sync at 32 KiB/s) is never cut, one whose bytes stop for
/// `Timeouts.firstByte` either way is. Answers come compressed when the server offers it (pull
/// pages), and are unpacked here.
public struct ServerLink: Sendable {
    /// The generated client. Apps call knowledge-base endpoints through it.
    public let client: Client
    public let serverURL: URL
    /// The server's time, as its answers tell it (the engine stamps by it when the device's clock is wrong).
    public let serverTime: ServerTime
    private let transport: SlowLinkTransport
    private let middlewares: [any ClientMiddleware]
    /// The signed-in user's token now (the live channel sends it when it opens).
    let accessToken: @Sendable () -> String?

    /// How long a request may wait at each step.
    public struct Timeouts: Sendable, Hashable {
        /// To open the TCP connection.
        public var connect: Duration
        /// From sending a request (or the last byte received) to the next byte of the answer; and
        /// the longest a request's body may wait to be taken while it is sent.
        public var firstByte: Duration

        public init(connect: Duration = .seconds(3), firstByte: Duration = .seconds(5)) {
            self.connect = connect
            self.firstByte = firstByte
        }
    }

    /// A request's deadline when none is given: a backstop only, as a request is cut at its
    /// first silence (`Timeouts`); a 5 MiB photo at 32 KiB/s takes under three minutes.
    public static let backstop: Duration = .seconds(30 * 60)

    /// - Parameters:
    ///   - timeout: the deadline of one whole request, connection included: a backstop (a request
    ///     that still moves bytes is never cut before it), which a caller that must answer a
    ///     person soon sets shorter.
    ///   - timeouts: the deadlines of its steps; requests with the same ones share an HTTP client.
    public init(
        serverURL: URL,
        timeout: Duration = ServerLink.backstop,
        timeouts: Timeouts = Timeouts(),
        middlewares: [any ClientMiddleware] = [],
        serverTime: ServerTime = ServerTime(),
        accessToken: @escaping @Sendable () -> String?
    ) {
        let transport = SlowLinkTransport(timeouts: timeouts, timeout: timeout)
        self.serverURL = serverURL
        self.accessToken = accessToken
        self.transport = transport
        self.serverTime = serverTime
        self.middlewares = [TransportFailureMiddleware(serverURL: serverURL, timeouts: timeouts), ServerTimeMiddleware(serverTime: serverTime),
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
        try await send(method, path, body: body, contentType: "application/json; charset=utf-8", operationID: operationID,
                       maxAnswerBytes: maxAnswerBytes)
    }

    /// A request with a body of `contentType` (bytes of an attachment), through the same
    /// middlewares; the answer read whole, up to `maxAnswerBytes`.
    func send(_ method: HTTPRequest.Method, _ path: String, body: Data?, contentType: String, accept: String = "application/json",
              operationID: String, maxAnswerBytes: Int = 64 * 1024 * 1024) async throws -> (HTTPResponse, Data) {
        var request = HTTPRequest(method: method, scheme: nil, authority: nil, path: path)
        request.headerFields[.accept] = accept
        if body != nil { request.headerFields[.contentType] = contentType }
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

extension ServerLink.Timeouts {
    /// The slowest link a request is carried over without being cut, in bytes per second: a
    /// crowded cell's edge.
    static let slowestLinkBytesPerSecond: Int64 = 8 * 1024

    /// These timeouts, with the wait for an answer lengthened by the time a body of `bytes` may
    /// still take to reach the server at the slowest link. NB: the request counts as sent once
    /// its last byte is handed to the system, whose buffers (and a proxy's) may hold a whole
    /// photo chunk: the server, reading it at the link's pace, is silent meanwhile, not gone.
    /// Rounded up to a power of two seconds, so that a few HTTP clients serve every size.
    func waitingForBody(of bytes: Int64) -> Self {
        // NB: what a socket takes at once crosses any link in a moment.
        guard bytes > 16 * 1024 else { return self }
        let seconds = Int((bytes + Self.slowestLinkBytesPerSecond - 1) / Self.slowestLinkBytesPerSecond)
        let rounded = 1 << (Int.bitWidth - (seconds - 1).leadingZeroBitCount)
        return Self(connect: connect, firstByte: firstByte + .seconds(rounded))
    }
}

/// The engine's transport: AsyncHTTPClient, through the shared client whose deadlines fit the
/// request (`Timeouts.waitingForBody`).
struct SlowLinkTransport: ClientTransport {
    let timeouts: ServerLink.Timeouts
    /// The backstop on the whole request.
    let timeout: Duration

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let bytes: Int64 = if case .known(let length)? = body?.length { length } else { 0 }
        let client = HTTPClients.shared(for: timeouts.waitingForBody(of: bytes))
        let transport = AsyncHTTPClientTransport(configuration: .init(client: client, timeout: .milliseconds(timeout.milliseconds)))
        return try await transport.send(request, body: body, baseURL: baseURL, operationID: operationID)
    }
}

/// One HTTP client per set of timeouts, for the life of the process.
///
/// NB: an `HTTPClient` must be shut down before it is released; these never are, so they live
/// in a process-wide table like `HTTPClient.shared` does.
enum HTTPClients {
    private static let clients = Mutex<[ServerLink.Timeouts: HTTPClient]>([:])
    /// How long an unused connection is kept for the next request: well under the server's idle timeout.
    static let idleConnectionLifetime: Duration = .seconds(10)

    static func shared(for timeouts: ServerLink.Timeouts) -> HTTPClient {
        clients.withLock { clients in
            if let client = clients[timeouts] { return client }
            var configuration = HTTPClient.Configuration()
            // NB: `read` is the silence allowed between two reads of the answer, `write` between
            // two writes of the request: deadlines on silence, never on a link that is slow.
            configuration.timeout = .init(connect: .milliseconds(timeouts.connect.milliseconds),
                                          read: .milliseconds(timeouts.firstByte.milliseconds),
                                          write: .milliseconds(timeouts.firstByte.milliseconds))
            // NB: asks for compressed answers (Accept-Encoding) and unpacks them; an answer that
            // would unpack past a hundred times its size is refused, not unpacked into memory.
            configuration.decompression = .enabled(limit: .ratio(100))
            // NB: by default a refused connection is retried with backoff until the request's
            // deadline; a phone in a basement should hear "offline" at once instead.
            configuration.connectionPool.retryConnectionEstablishment = false
            // NB: a kept-alive connection is dropped here before the server's idle timeout (30 s by
            // default) closes it: else a request sent on it as the server closes it is "cut" (seen
            // under load, where the server's close arrived after the connection was picked again).
            configuration.connectionPool.idleTimeout = .milliseconds(idleConnectionLifetime.milliseconds)
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
        } catch let error where RemoteFailure.rootCause(of: error) is CancellationError {
            throw CancellationError()
        } catch {
            // NB: what reaches here is usually the generated client's error, whose description holds
            // the request and its body (a password, a token): only its kind is kept.
            throw RemoteFailure.from(error, server: serverURL, timeouts: timeouts)
        }
        // NB: an Eventual server answers every error in JSON. Anything else (a web server's 404
        // page, a captive portal, a proxy's 502) is not an answer about this request: retry later,
        // and never mark an outbox entry failed because of it.
        let (response, _) = answer
        if response.status.code >= 400, !(response.headerFields[.contentType] ?? "").lowercased().contains("json") {
            throw RemoteFailure.unreachable("Not an Eventual server at \(RemoteFailure.name(serverURL)) (it answered HTTP \(response.status.code))")
        }
        return answer
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

extension RemoteFailure {
    /// A failure from an error answer's status and body (our error shape says why).
    static func answer(_ statusCode: Int, _ body: Data) -> RemoteFailure {
        let error = try? JSONDecoder().decode(Components.Schemas._Error.self, from: body)
        let message = error?.message ?? "HTTP \(statusCode)"
        if statusCode == 409, error?.code == RemoteFailure.upgradeRequiredCode { return .upgradeRequired(message) }
        return .status(statusCode, message: message)
    }
}

/// Turns an undocumented answer of the generated client into a failure.
func remoteFailure(_ statusCode: Int, _ payload: UndocumentedPayload) async -> RemoteFailure {
    var body = Data()
    if let stream = payload.body, let data = try? await Data(collecting: stream, upTo: 64 * 1024) { body = data }
    return .answer(statusCode, body)
}
