import Synchronization

/// A FIFO lock for async code: one holder at a time, waiters resumed in arrival order.
///
/// The single SQLite write connection is shared by every request; a transaction must own it
/// from `BEGIN` to `COMMIT` even across suspension points, which an actor alone cannot promise.
public final class AsyncLock: Sendable {
    private struct State {
        var isLocked = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    public init() {}

    /// Runs `body` once every earlier caller's body has finished.
    public func withLock<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        // NB: the common case, a free lock, takes it without suspending: a resumed continuation
        // would put the task back at the end of its executor's queue (the SQLite writer's thread).
        let taken = state.withLock { state -> Bool in
            guard !state.isLocked else { return false }
            state.isLocked = true
            return true
        }
        if taken { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state -> Bool in
                if state.isLocked {
                    state.waiters.append(continuation)
                    return false
                }
                state.isLocked = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.isLocked = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
