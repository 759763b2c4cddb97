/// The live channel: one WebSocket per signed-in device, from which the server tells the device
/// that a pull is worth making now. It carries signals, never records: what changed still comes
/// by the pull, with its cursor and its rules (exactly once, per-space positions, subscriptions).
///
/// A device opens `GET /v1/sync/live` with the upgrade to WebSocket, its bearer token in
/// `Authorization` and its subscription's collections as `collection` query values (as a pull
/// names them; none means every collection). The server answers text frames of JSON `Message`s
/// and pings every `heartbeat` seconds; the device pings too. Either side closes a connection
/// whose pings go unanswered.
public enum LiveWire {
    public static let path = "/v1/sync/live"

    /// A frame from the server.
    public struct Message: Codable, Sendable, Equatable {
        public enum Kind: String, Codable, Sendable {
            /// The first frame: the channel is up.
            case live
            /// Spaces moved: `spaces` holds each one's newest position (its last change's seq).
            case moved
            /// Pull once: the server may have missed signals (its listening connection to the
            /// database was lost), or what the device may see changed (a space joined or left).
            case pull
        }

        public var type: Kind
        /// `moved`: space id to its newest position.
        public var spaces: [String: Int64]?
        /// `live`: seconds between the server's pings.
        public var heartbeat: Int?

        public init(type: Kind, spaces: [String: Int64]? = nil, heartbeat: Int? = nil) {
            self.type = type
            self.spaces = spaces
            self.heartbeat = heartbeat
        }
    }

    /// The close code of a channel whose token was signed out, revoked or expired: the device
    /// stops reconnecting until it signs in again (WebSocket's private range, 4000-4999).
    public static let signedOutCode: UInt16 = 4401
}
