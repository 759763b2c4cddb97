import Synchronization

/// A many-listener "something happened" signal: every stream made by `stream()` gets one
/// element per `fire()` (coalesced when the listener is behind).
final class ChangeSignal: Sendable {
    private let continuations = Mutex<[Int: AsyncStream<Void>.Continuation]>([:])
    private let nextID = Atomic<Int>(0)

    func stream() -> AsyncStream<Void> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [weak self] _ in
            _ = self?.continuations.withLock { $0.removeValue(forKey: id) }
        }
        continuations.withLock { $0[id] = continuation }
        return stream
    }

    func fire() {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield() }
    }
}

/// A many-listener stream of the latest value: a new listener first gets the current value.
final class Broadcast<Value: Sendable>: Sendable {
    private struct State {
        var current: Value
        var continuations: [Int: AsyncStream<Value>.Continuation] = [:]
        var nextID = 0
    }
    private let state: Mutex<State>

    init(_ initial: Value) { state = Mutex(State(current: initial)) }

    var current: Value { state.withLock { $0.current } }

    func stream() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(16))
        let id = state.withLock { state in
            state.nextID += 1
            state.continuations[state.nextID] = continuation
            continuation.yield(state.current)
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    func send(_ value: Value) {
        let listeners = state.withLock { state in
            state.current = value
            return Array(state.continuations.values)
        }
        for continuation in listeners { continuation.yield(value) }
    }

    func update(_ change: (inout Value) -> Void) {
        let (value, listeners) = state.withLock { state in
            change(&state.current)
            return (state.current, Array(state.continuations.values))
        }
        for continuation in listeners { continuation.yield(value) }
    }

    func finish() {
        for continuation in state.withLock({ Array($0.continuations.values) }) { continuation.finish() }
    }
}
