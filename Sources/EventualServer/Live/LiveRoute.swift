import EventualAPI
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

/// `GET /v1/sync/live` upgraded to a WebSocket: a device's live channel (`LiveWire`).
///
/// The token is checked before the upgrade (no channel for a token that is no good) and again
/// every `recheck`, and a sign-out closes the channels of its token at once (`LiveHub.signedOut`):
/// a channel whose token is no longer good is closed with `LiveWire.signedOutCode`, which tells
/// the device not to come back until it signs in again. Pings every `heartbeat` (the WebSocket handler's) close a channel whose
/// device stopped answering.
struct LiveRoute: Sendable {
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
        let hash = AccessToken.hash(token)
        let connection = LiveConnection(userID: record.userID, tokenFingerprint: AccessToken.fingerprint(ofHash: hash),
                                        collections: subscription.map { Set($0.parts.map(\.collection)) })
        return .upgrade([:], { inbound, outbound, context in
            try await serve(connection, tokenHash: hash, inbound: inbound, outbound: outbound)
        })
    }

    private func serve(_ connection: LiveConnection, tokenHash: String, inbound: WebSocketInboundStream,
                       outbound: WebSocketOutboundWriter) async throws {
        hub.register(connection)
        defer { hub.unregister(connection) }
        let hello = LiveWire.Message(type: .live, heartbeat: Int(heartbeat.components.seconds))
        try await outbound.write(.text(Self.text(hello)))
        try await withThrowingTaskGroup(of: Void.self) { group in
            // The writer: what is owed, when it is owed; a slow reader holds it here, at the
            // socket's backpressure, while the owed positions coalesce in the connection.
            group.addTask {
                for await _ in connection.wakes where !connection.isClosed {
                    for message in connection.take() { try await outbound.write(.text(Self.text(message))) }
                }
                if connection.isClosed {
                    try await outbound.close(WebSocketErrorCode(codeNumber: Int(LiveWire.signedOutCode)), reason: "signed out")
                }
            }
            // The reader: a device sends nothing but pings, pongs and its close (the handler
            // answers those); its channel ends when it closes.
            group.addTask {
                for try await _ in inbound {}
            }
            // A token revoked elsewhere (the dashboard, its expiry) ends the channel by the next check.
            group.addTask {
                while !Task.isCancelled {
                    try await Task.sleep(for: recheck)
                    let record = try? await tokens.token(hash: tokenHash)
                    if record?.isValid(at: UnixMillis.now()) != true {
                        connection.close()
                        return
                    }
                }
            }
            _ = try await group.next()
            // NB: after a close the writer's close frame must go out before the others stop.
            if connection.isClosed { _ = try? await group.next() }
            group.cancelAll()
        }
    }

    private static func text(_ message: LiveWire.Message) -> String {
        String(decoding: (try? JSONEncoder().encode(message)) ?? Data(), as: UTF8.self)
    }
}
