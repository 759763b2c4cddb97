import EventualAPI
import Foundation
import HTTPTypes
import Logging
import NIOWebSocket
import Synchronization
import WSClient

/// The device's end of the live channel (`LiveWire`): one WebSocket to the server while the
/// engine runs, opened again after it drops, with backoff and full jitter, so that ten thousand
/// devices reconnecting after a server restart spread over `LiveSettings.backoff`'s first step
/// rather than arriving in the same second.
///
/// It reports what it hears (`LiveEvent`) and knows nothing of pulls: the engine decides.
struct LiveLink: Sendable {
    let serverURL: URL
    let accessToken: @Sendable () -> String?
    /// The collections the device subscribes to: the server signals only changes of these.
    let collections: [String]
    let settings: LiveSettings
    let logger: Logger
    /// Rung when a sync round reached the server while the channel is down (`LiveNudge`).
    var nudges = LiveNudge()

    /// Holds the channel until the task is cancelled, or the server says the token is no good
    /// (then it returns `.signedOut` and the engine waits for a new sign-in).
    func run(_ report: @escaping @Sendable (LiveEvent) async -> Void) async {
        var failures = 0
        while !Task.isCancelled {
            guard let token = accessToken() else {
                await report(.signedOut)
                return
            }
            let outcome = await connectOnce(token: token, report: report)
            if Task.isCancelled { return }
            switch outcome {
            case .signedOut:
                await report(.signedOut)
                return
            case .ended(let wasUp):
                await report(.down)
                // NB: a channel that was up starts the backoff over: a server restart is one
                // failure, and the first wait is drawn from [0, first step] for every device.
                failures = wasUp ? 0 : failures + 1
            }
            let ceiling = settings.backoff.ceilingMillis(afterFailures: failures)
            // NB: a round that reached the server while this waits says it answers again: the
            // channel is opened within the backoff's first step, not after the rest of a wait
            // grown to two minutes. The rounds of ten thousand devices are spread by their own
            // timers, and the first step's draw spreads them more.
            if await nudges.sleep(for: .milliseconds(Int64(Double.random(in: 0...ceiling)))) {
                failures = 0
                let first = settings.backoff.ceilingMillis(afterFailures: 0)
                try? await Task.sleep(for: .milliseconds(Int64(Double.random(in: 0...first))))
            }
        }
    }

    private enum Outcome { case ended(wasUp: Bool), signedOut }

    private func connectOnce(token: String, report: @escaping @Sendable (LiveEvent) async -> Void) async -> Outcome {
        var headers = HTTPFields()
        headers[.authorization] = "Bearer \(token)"
        let configuration = WebSocketClientConfiguration(additionalHeaders: headers, closeTimeout: .seconds(5),
                                                         autoPing: .enabled(timePeriod: settings.heartbeat))
        let wasUp = LiveFlag()
        do {
            let close = try await WebSocketClient.connect(url: Self.url(serverURL, collections: collections), configuration: configuration,
                                                          logger: logger) { inbound, _, _ in
                for try await message in inbound.messages(maxSize: 64 * 1024) {
                    guard case .text(let text) = message,
                          let decoded = try? JSONDecoder().decode(LiveWire.Message.self, from: Data(text.utf8)) else { continue }
                    switch decoded.type {
                    case .live:
                        wasUp.set()
                        await report(.up)
                    case .moved: await report(.moved(decoded.spaces ?? [:]))
                    case .pull: await report(.pull)
                    }
                }
            }
            if let close, close.closeCode == WebSocketErrorCode(codeNumber: Int(LiveWire.signedOutCode)) {
                logger.info("live channel closed: signed out")
                return .signedOut
            }
        } catch {
            logger.debug("live channel ended", metadata: ["error": "\(type(of: error))"])
        }
        return .ended(wasUp: wasUp.isSet)
    }

    /// `ws://host/v1/sync/live?collection=…` (or `wss://`) from the server's base URL.
    static func url(_ serverURL: URL, collections: [String]) -> String {
        var components = URLComponents(url: serverURL, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        components.path = components.path.hasSuffix("/") ? String(components.path.dropLast()) + LiveWire.path
            : components.path + LiveWire.path
        components.queryItems = collections.isEmpty ? nil : collections.map { URLQueryItem(name: "collection", value: $0) }
        return components.string ?? serverURL.absoluteString
    }
}

/// What the live channel tells the engine.
enum LiveEvent: Sendable, Equatable {
    /// The channel is up (again): anything may have moved while it was down.
    case up
    /// These spaces moved to these positions.
    case moved([String: Int64])
    /// Pull once.
    case pull
    /// The channel dropped; it is being opened again.
    case down
    /// The server refused the token: no channel until a new sign-in.
    case signedOut
}

/// How the engine holds its live channel.
public struct LiveSettings: Sendable {
    /// Whether the engine holds a live channel while it runs (`SyncEngine.start()`).
    public var enabled = true
    /// Reconnection waits: the n-th is drawn from 0 to `initial × 2ⁿ`, never above `maximum`.
    public var backoff = Backoff(initial: .seconds(5), maximum: .seconds(120))
    /// How often the device pings the server; a ping unanswered by the next one closes the channel.
    public var heartbeat: Duration = .seconds(30)
    /// How often the engine still syncs while the channel is up: the server's signals bring
    /// changes; this only catches what no signal can (another app's write to a shared file, a
    /// signal lost to a crash between a commit and its notification).
    public var intervalWhileLive: Duration = .seconds(15 * 60)

    public init() {}
}

/// Tells a live channel waiting to reconnect that the server answers again (`LiveLink.run`).
/// A nudge while nothing waits is kept for the next wait (one, however many came). One task
/// sleeps on it at a time.
final class LiveNudge: Sendable {
    private struct State {
        var pending = false
        /// The sleep under way, and its waiter once it waits.
        var sleep = 0
        var waiter: CheckedContinuation<Bool, Never>?
        /// The sleep whose time ran out (or was cancelled) before it waited.
        var expired = 0
    }

    private let state = Mutex(State())

    func nudge() {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: true)
    }

    /// Sleeps for `duration`, or until a nudge (or the task's cancellation): whether it was nudged.
    func sleep(for duration: Duration) async -> Bool {
        let sleep = state.withLock { state -> Int? in
            if state.pending {
                state.pending = false
                return nil
            }
            state.sleep += 1
            return state.sleep
        }
        guard let sleep else { return true }
        let timer = Task { [self] in
            try? await Task.sleep(for: duration)
            expire(sleep)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { waiter in
                let now = state.withLock { state -> Bool? in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    if state.expired == sleep { return false }
                    state.waiter = waiter
                    return nil
                }
                if let now { waiter.resume(returning: now) }
            }
        } onCancel: {
            expire(sleep)
        }
    }

    /// Ends `sleep` un-nudged: at once if it waits, as soon as it does if not yet.
    private func expire(_ sleep: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard state.sleep == sleep else { return nil }
            state.expired = sleep
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: false)
    }
}

/// A flag set once, read from another task.
private final class LiveFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
