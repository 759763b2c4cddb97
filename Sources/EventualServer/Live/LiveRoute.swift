import EventualAPI
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import ServiceLifecycle

/// `GET /v1/sync/live` upgraded to a WebSocket: a device's live channel (`LiveWire`).
///
/// The token is checked before the upgrade (no channel for a token that is no good) and again
/// every `recheck` (`run`, one sweep of every channel of the process), and a sign-out closes the
/// channels of its token at once (`LiveHub.signedOut`): a channel whose token is no longer good is
/// closed with `LiveWire.signedOutCode`, which tells the device not to come back until it signs in
/// again. Pings every `heartbeat` (the WebSocket handler's) close a channel whose device stopped
/// answering.
///
/// NB: a channel is one task beside the WebSocket handler's own two (its reader and pings): the
/// writer runs in the handler's task and the token checks in one sweep for all. A task per check
/// and one more for the reader made a channel cost the server 37 KB at 10,000 devices. The sweep
/// reads the tokens a few hundred a statement: one read per channel, 5,000 round trips a minute
/// per server on PostgreSQL, held a connection of its small pool for seconds.
struct LiveRoute: Service {
    typealias Handler = WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>

    let tokens: BarcodeLookupReads
    let hub: LiveHub
    let heartbeat: Duration
    let recheck: Duration

    func shouldUpgrade(_ request: HTTPRequest) async -> ShouldUpgradeResult<Handler> {
        guard let target = request.path, let url = URLComponents(string: target), url.path == LiveWire.path else { return .dontUpgrade }
        let collections = url.queryItems?.filter { $0.name == "collection" }.compactMap(\.value) ?? []
        // NB: a token that is no good, or collections that are not, get no channel: the upgrade is
        // refused (an HTTP 400 that closes the connection), and the engine's next request hears the
        // 401 and stops it until a new sign-in. An upgrade that then closed at once with a code was
        // tried first: under load the client sometimes never saw that close, and waited for ever.
        // (nil: every collection, as a pull that names none)
        let parsed = Result { () throws(APIError) -> PullSubscription? in try PullSubscription(parsing: collections) }
        guard let token = RequestScope.bearerToken(in: request.headerFields[.authorization]),
              let record = try? await tokens.token(hash: AccessToken.hash(token)), record.isValid(at: UnixMillis.now()),
              case .success(let subscription) = parsed
        else { return .dontUpgrade }
        let connection = LiveConnection(userID: record.userID, tokenHash: AccessToken.hash(token),
                                        collections: subscription.map { Set($0.parts.map(\.collection)) })
        return .upgrade([:], { inbound, outbound, context in
            try await serve(connection, inbound: inbound, outbound: outbound)
        })
    }

    private func serve(_ connection: LiveConnection, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        hub.register(connection)
        defer { hub.unregister(connection) }
        let hello = LiveWire.Message(type: .live, heartbeat: Int(heartbeat.components.seconds))
        try await outbound.write(.text(Self.text(hello)))
        try await withThrowingTaskGroup(of: Void.self) { group in
            // The reader: a device sends nothing but pings, pongs and its close (the handler
            // answers those); when it closes, or its socket fails, the writer stops too.
            group.addTask {
                defer { connection.end() }
                for try await _ in inbound {}
            }
            // The writer, in this task: what is owed, when it is owed; a slow reader holds it here,
            // at the socket's backpressure, while the owed positions coalesce in the connection.
            for await _ in connection.wakes where !connection.isClosed {
                for message in connection.take() { try await outbound.write(.text(Self.text(message))) }
            }
            if connection.isClosed {
                try await outbound.close(WebSocketErrorCode(codeNumber: Int(LiveWire.signedOutCode)), reason: "signed out")
            }
            group.cancelAll()
        }
    }

    /// Every `recheck`, closes the channels whose token was revoked elsewhere (the dashboard) or
    /// expired, the tokens read a few hundred a statement. NB: when they cannot be read now (the
    /// database is down) every channel stays until a check that can: a failed read is not a
    /// revocation.
    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: recheck)
                if Task.isCancelled { return }
                let held = hub.tokenHashes
                guard !held.isEmpty, let good = try? await tokens.goodTokens(among: held, at: UnixMillis.now()) else { continue }
                hub.closeChannels(ofTokens: held.subtracting(good))
            }
        }
    }

    private static func text(_ message: LiveWire.Message) -> String {
        String(decoding: (try? JSONEncoder().encode(message)) ?? Data(), as: UTF8.self)
    }
}
