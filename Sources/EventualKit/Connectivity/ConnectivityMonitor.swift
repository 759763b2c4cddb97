import EventualAPI
import Foundation
import Synchronization

/// Whether the server can be reached, as far as the engine knows.
public enum Connectivity: String, Sendable, Equatable {
    case online, offline, unknown
}

/// Knows whether the server is reachable: any transport error marks it offline at once, any
/// answer marks it online, and while offline it probes `GET /health` with capped exponential
/// backoff and jitter, so that the engine learns the network is back without a user action.
///
/// On Apple platforms a path monitor can call `hintNetworkChanged()` to probe at once.
public final class ConnectivityMonitor: Sendable {
    private struct State {
        var connectivity: Connectivity = .unknown
        var prober: Task<Void, Never>?
        var isStopped = false
    }

    private let probe: @Sendable () async -> Bool
    private let backoff: Backoff
    private let state = Mutex(State())
    private let broadcast = Broadcast<Connectivity>(.unknown)

    /// - Parameter probe: true when the server answered (the engine passes a `GET /health`).
    public init(backoff: Backoff = Backoff(initial: .milliseconds(250), maximum: .seconds(30)),
                probe: @escaping @Sendable () async -> Bool) {
        self.probe = probe
        self.backoff = backoff
    }

    public var current: Connectivity { broadcast.current }

    /// Every change, starting with the current state.
    public var changes: AsyncStream<Connectivity> { broadcast.stream() }

    /// Starts probing (it runs until the server answers).
    public func start() {
        if current != .online { startProbing() }
    }

    public func stop() {
        let prober = state.withLock { state in
            state.isStopped = true
            defer { state.prober = nil }
            return state.prober
        }
        prober?.cancel()
        broadcast.finish()
    }

    /// A request got an answer (any HTTP status): the server is reachable.
    public func reportAnswer() { set(.online) }

    /// A request failed without an answer: offline until a probe succeeds.
    public func reportTransportFailure() {
        set(.offline)
        startProbing()
    }

    /// The device's network changed (a path-monitor hint): probe now rather than at the next backoff step.
    public func hintNetworkChanged() {
        state.withLock { state in
            state.prober?.cancel()
            state.prober = nil
        }
        startProbing()
    }

    /// Probes once now and returns the result.
    @discardableResult
    public func check() async -> Connectivity {
        let reachable = await probe()
        set(reachable ? .online : .offline)
        return current
    }

    /// Probes once, waiting at most `budget`; a probe without an answer by then counts as
    /// offline (and goes on in the background: a late answer still sets the state).
    @discardableResult
    public func check(within budget: Duration) async -> Connectivity {
        guard await withinBudget(budget, { await self.check() }) != nil else {
            set(.offline)
            return .offline
        }
        return current
    }

    private func set(_ connectivity: Connectivity) {
        if broadcast.current != connectivity { broadcast.send(connectivity) }
    }

    private func startProbing() {
        state.withLock { state in
            guard !state.isStopped, state.prober == nil else { return }
            state.prober = Task { [weak self] in
                await self?.probeUntilOnline()
            }
        }
    }

    private func probeUntilOnline() async {
        var attempt = 0
        while !Task.isCancelled {
            if await probe() {
                set(.online)
                break
            }
            set(.offline)
            try? await Task.sleep(for: backoff.delay(afterFailures: attempt))
            attempt += 1
        }
        state.withLock { $0.prober = nil }
    }
}

/// Capped exponential backoff with full jitter: the n-th retry waits a random time between half
/// and all of `initial × 2ⁿ`, never more than `maximum`.
public struct Backoff: Sendable, Equatable {
    public var initial: Duration
    public var maximum: Duration

    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(300)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The wait after `failures` consecutive failures (0 for the first retry).
    public func delay(afterFailures failures: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let ceiling = ceilingMillis(afterFailures: failures)
        let millis = Double.random(in: (ceiling / 2)...ceiling, using: &generator)
        return .milliseconds(Int64(millis))
    }

    public func delay(afterFailures failures: Int) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return delay(afterFailures: failures, using: &generator)
    }

    /// The longest wait after `failures` failures, in milliseconds.
    public func ceilingMillis(afterFailures failures: Int) -> Double {
        min(maximum.fractionalMilliseconds, initial.fractionalMilliseconds * pow(2, Double(min(failures, 40))))
    }
}
