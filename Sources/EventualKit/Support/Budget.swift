import Synchronization

/// Runs `work` and waits for it at most `budget`: its result, or nil when the budget ran out
/// first. NB: the work is not cancelled; it goes on in the background and its effects land
/// (an outbox entry sent after the budget is still acknowledged; one cut short by the process
/// ending is sent again at the next start, and its id makes the server answer `duplicate`).
func withinBudget<T: Sendable>(_ budget: Duration, _ work: @escaping @Sendable () async -> T) async -> T? {
    let work = Task { await work() }
    return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        let answered = Mutex(false)
        let answer: @Sendable (T?) -> Void = { value in
            let first = answered.withLock { done in
                defer { done = true }
                return !done
            }
            if first { continuation.resume(returning: value) }
        }
        Task { answer(await work.value) }
        Task {
            try? await Task.sleep(for: budget)
            answer(nil)
        }
    }
}

/// Runs `body`, giving up with `RemoteFailure.unreachable` after `limit`: for an app's call to
/// its server that must not hold a screen (or a command) longer than that.
public func withTimeLimit<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw RemoteFailure.unreachable("The server did not answer in \(limit.components.seconds) s")
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
