import Foundation

/// Runs CPU-heavy synchronous work (a password hash) on a thread of its own, so that it never
/// holds one of the few threads Swift concurrency shares between every task of the process.
func offCooperativePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try work() })
        }
        thread.start()
    }
}
