import EventualAPI
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// `GET /v1/sync/live` upgraded to a WebSocket: a device's live channel (`LiveWire`).
///
/// The token is checked before the upgrade (no channel for a token that is no good) and again
/// every `recheck` (`run`, one sweep of every channel of the process), and a sign-out closes the
/// channels of its token at once (`LiveHub.signedOut`): a channel whose token is no longer good is
/// closed with `LiveWire.signedOutCode`, which tells the device not to come back until it signs in
/// again. Once upgraded, a channel is a handler on its socket (`LiveSocket`), with no task.
///
/// NB: the sweep reads the tokens a few hundred a statement: one read per channel, 5,000 round
/// trips a minute per server on PostgreSQL, held a connection of its small pool for seconds.
struct LiveRoute: Service {
    let tokens: BarcodeLookupReads
    let hub: LiveHub
    let heartbeat: Duration
    let recheck: Duration

    /// The channel `target` (the request's path and query) opens for the bearer token in
    /// `authorization`, or nil when it opens none: not the live path, a token that is no good, or
    /// collections that are not.
    ///
    /// NB: a refused upgrade is an HTTP 400 that closes the connection, and the engine's next
    /// request hears the 401 and stops it until a new sign-in. An upgrade that then closed at once
    /// with a code was tried first: under load the client sometimes never saw that close, and
    /// waited for ever.
    func admit(target: String, authorization: String?) async -> LiveConnection? {
        guard let url = URLComponents(string: target), url.path == LiveWire.path else { return nil }
        let collections = url.queryItems?.filter { $0.name == "collection" }.compactMap(\.value) ?? []
        // (nil: every collection, as a pull that names none)
        let parsed = Result { () throws(APIError) -> PullSubscription? in try PullSubscription(parsing: collections) }
        guard let token = RequestScope.bearerToken(in: authorization),
              let record = try? await tokens.token(hash: AccessToken.hash(token)), record.isValid(at: UnixMillis.now()),
              case .success(let subscription) = parsed
        else { return nil }
        return LiveConnection(userID: record.userID, tokenHash: AccessToken.hash(token),
                              collections: subscription.map { Set($0.parts.map(\.collection)) })
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
}
