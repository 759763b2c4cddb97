import EventualAPI
import Foundation
import Synchronization

/// Whether the server can be reached, as far as the engine knows.
public enum Connectivity: String, Sendable, Equatable {
    case online, offline, unknown
}

/// What this process last found of the server without an answer: nothing (it answered, or was
/// not asked), silent (it accepted the connection and never answered) or unreachable.
public enum ServerFinding: String, Sendable, Equatable {
    case none, silent, unreachable
}

/// Knows whether the server is reachable: any transport error marks it offline at once, any
/// answer marks it online, and while offline it probes `GET /health` with capped exponential
/// backoff and jitter, so that the engine learns the network is back without a user action.
///
/// It also remembers what this process found (`finding`): a command that found the server silent
/// or unreachable once does not wait for it again (`checkOnce(within:)`) until an answer comes.
///
/// On Apple platforms a path monitor can call `hintNetworkChanged()` to probe at once.
public final class ConnectivityMonitor: Sendable {
    private struct State {
        var connectivity: Connectivity = .unknown
        var prober: Task<Void, Never>?
        var isStopped = false
        var finding = ServerFinding.none
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

    /// What this process found of the server since its last answer (`.none` once one came).
    public var finding: ServerFinding { state.withLock { $0.finding } }

    /// True once this process found the server silent or unreachable, until it answers again.
    public var foundOffline: Bool { finding != .none }

    /// True when what this process found is a server that accepted the connection but did not
    /// answer (not "no internet"): the words differ.
    public var foundSilent: Bool { finding == .silent }

    /// A request got an answer (any HTTP status): the server is reachable.
    public func reportAnswer() { set(.online) }

    /// A request failed without an answer: offline until a probe succeeds.
    public func reportTransportFailure() {
        found(.unreachable)
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
        if !reachable { found(.unreachable) }
        set(reachable ? .online : .offline)
        return current
    }

    /// Probes once, waiting at most `budget`; a probe without an answer by then counts as
    /// offline (and goes on in the background: a late answer still sets the state).
    @discardableResult
    public func check(within budget: Duration) async -> Connectivity {
        guard await withinBudget(budget, { await self.check() }) != nil else {
            // NB: a refused connection fails at once; a server that accepted it and sent nothing
            // is the one that holds the whole budget.
            found(.silent)
            set(.offline)
            return .offline
        }
        return current
    }

    /// As `check(within:)`, unless this process already found the server silent or unreachable
    /// and has heard nothing from it since: then offline at once, so that one command waits for
    /// a dead or silent server once, not at every step.
    @discardableResult
    public func checkOnce(within budget: Duration) async -> Connectivity {
        if foundOffline { return .offline }
        return await check(within: budget)
    }

    private func set(_ connectivity: Connectivity) {
        if connectivity == .online { state.withLock { $0.finding = .none } }
        if broadcast.current != connectivity { broadcast.send(connectivity) }
    }

    /// NB: a request that fails after the server was found silent (its own first-byte deadline)
    /// leaves it silent: both are the same server, and "not answering" is the truer word.
    private func found(_ finding: ServerFinding) {
        state.withLock { state in
            if finding == .silent || state.finding == .none { state.finding = finding }
        }
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
