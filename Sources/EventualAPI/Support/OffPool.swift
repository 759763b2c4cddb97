import Foundation

/// Runs blocking or CPU-heavy synchronous work on a thread of its own and returns its result.
///
/// Swift concurrency shares a few threads (one per core) between every task of the process: a
/// password hash, a blocking socket, a photo's decoding or a child process waited for there would
/// hold one of them and can starve every other task (on a 2-core machine, all of them). What
/// `work` throws is thrown here; a `work` that cannot throw needs no `try`.
public func offCooperativePool<T: Sendable, Failure: Error>(
    _ work: @escaping @Sendable () throws(Failure) -> T
) async throws(Failure) -> T {
    let result: Result<T, Failure> = await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: Result { () throws(Failure) -> T in try work() }) }.start()
    }
    return try result.get()
}
