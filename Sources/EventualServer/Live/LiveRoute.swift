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
/// The token is checked before the upgrade and again every `recheck`, and a sign-out closes the
/// channels of its token at once (`LiveHub.signedOut`): a channel whose token is no longer good
/// is closed with `LiveWire.signedOutCode`, which tells the device not to come back until it
/// signs in again. Pings every `heartbeat` (the WebSocket handler's) close a channel whose
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
        guard let token = RequestScope.bearerToken(in: request.headerFields[.authorization]),
              let record = try? await tokens.token(hash: AccessToken.hash(token)), record.isValid(at: UnixMillis.now())
        else { return .upgrade([:], Self.refusal("sign in again: the token is missing, expired or signed out", code: LiveWire.signedOutCode)) }
        let subscription: PullSubscription?
        do {
            subscription = try PullSubscription(parsing: collections)
        } catch {
            return .upgrade([:], Self.refusal(error.message, code: 4400))
        }
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

    /// A channel that is closed as soon as it opens, with `code` and `reason`: the device reads
    /// why (a WebSocket client sees a close far more reliably than an HTTP answer to its upgrade).
    private static func refusal(_ reason: String, code: UInt16) -> Handler {
        { _, outbound, _ in
            try await outbound.close(WebSocketErrorCode(codeNumber: Int(code)), reason: String(reason.prefix(120)))
        }
    }

    private static func text(_ message: LiveWire.Message) -> String {
        String(decoding: (try? JSONEncoder().encode(message)) ?? Data(), as: UTF8.self)
    }
}
