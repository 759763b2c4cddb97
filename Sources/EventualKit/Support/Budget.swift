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
