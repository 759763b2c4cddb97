import Foundation
import Synchronization

/// Every value a live query (any async stream) emitted, as a screen holding it would have seen
/// them, until cancelled.
public final class LiveValues<Value: Sendable>: Sendable {
    private final class Seen: Sendable {
        let values = Mutex<[Value]>([])
        /// Set when the stream ended: the error it ended with, or nil.
        let end = Mutex<(any Error)??>(nil)
    }
    private let seen = Seen()
    private let task = Mutex<Task<Void, Never>?>(nil)

    public init(_ stream: AsyncThrowingStream<Value, any Error>) {
        let seen = self.seen
        let running = Task {
            do {
                for try await value in stream { seen.values.withLock { $0.append(value) } }
                seen.end.withLock { $0 = .some(nil) }
            } catch {
                seen.end.withLock { $0 = .some(error) }
            }
        }
        task.withLock { $0 = running }
    }

    public var all: [Value] { seen.values.withLock { $0 } }
    public var latest: Value? { all.last }

    /// Waits (up to 20 s) until the latest value satisfies `condition`.
    public func wait(until condition: (Value) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let latest, condition(latest) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("no value came that satisfies the condition; the last: \(String(describing: latest))")
    }

    /// Lets the stream deliver anything still on its way.
    public func letStragglersArrive() async throws {
        try await Task.sleep(for: .milliseconds(300))
    }

    /// Waits (up to 20 s) until the stream ends; returns the error it ended with, if any.
    public func waitForEnd() async throws -> (any Error)? {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let end = seen.end.withLock({ $0 }) { return end }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("the stream did not end; the last value: \(String(describing: latest))")
    }

    public func cancel() async {
        let running = task.withLock { $0 }
        running?.cancel()
        await running?.value
    }
}
