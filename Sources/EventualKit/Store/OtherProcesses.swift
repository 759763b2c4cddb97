import Foundation
import GRDB
import Synchronization

/// What another process did to this device's database: a command run beside a watching one,
/// an app extension. GRDB tells a process of its own commits only.
public enum OtherProcessEvent: Sendable, Equatable {
    /// Another connection committed: what is stored may have changed.
    case committed
    /// The database file was removed or replaced (the person signed out, or someone else signed
    /// in): nothing more will come from this store. The last event of a stream.
    case removed
}

/// Watches the database for other processes' commits, for every listener with one poll: started
/// by the first listener and stopped when the last leaves.
///
/// NB: `PRAGMA data_version` on the writer's connection changes only when another connection
/// commits, and in this process only the writer commits: so this process's own writes (a sync
/// round, a local change) are never reported, and a live query never reads afresh for them.
/// The file's identity (its inode) tells a removed or replaced database.
final class OtherProcesses: Sendable {
    private struct State {
        var listeners: [Int: AsyncStream<OtherProcessEvent>.Continuation] = [:]
        var nextID = 0
        var poll: Task<Void, Never>?
        var removed = false
    }

    private let writer: any DatabaseWriter
    private let file: DatabaseFile?
    private let interval: Duration
    private let state = Mutex(State())

    init(writer: any DatabaseWriter, every interval: Duration = .seconds(1)) {
        self.writer = writer
        self.file = DatabaseFile(path: writer.path)
        self.interval = interval
    }

    /// Every event from now on. A database in memory has no other process: its stream ends at once.
    ///
    /// NB: the first listener reads the starting version before this returns, so a commit made
    /// after it returns is reported: a listener subscribes, then reads its first value.
    func events() async -> AsyncStream<OtherProcessEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: OtherProcessEvent.self, bufferingPolicy: .bufferingNewest(1))
        guard let file else {
            continuation.finish()
            return stream
        }
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in self?.leave(id) }
        var start: Checkpoint?
        while true {
            let joining: Joining = state.withLock { state in
                if state.removed { return .ended }
                if state.poll == nil {
                    guard let start else { return .needsStart }
                    state.poll = Task { [weak self] in await self?.poll(from: start) }
                }
                state.listeners[id] = continuation
                return .joined
            }
            switch joining {
            case .needsStart:
                // The first listener reads where the poll starts, outside the lock, then joins.
                start = Checkpoint(identity: file.identity(),
                                   version: try? await writer.writeWithoutTransaction { db in try Self.dataVersion(db) })
            case .joined:
                return stream
            case .ended:
                // NB: outside the lock: finishing calls `leave`.
                continuation.yield(.removed)
                continuation.finish()
                return stream
            }
        }
    }

    private enum Joining {
        case joined, needsStart, ended
    }

    private struct Checkpoint {
        var identity: UInt64?
        var version: Int?
    }

    private func poll(from start: Checkpoint) async {
        var seen = start
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            guard !Task.isCancelled, let file else { return }
            let identity = file.identity()
            if identity == nil || (seen.identity != nil && identity != seen.identity) {
                return end()
            }
            seen.identity = identity
            // NB: a version that cannot be read (the database busy past its timeout) is read at
            // the next turn, and a commit meanwhile is reported then.
            guard let version = try? await writer.writeWithoutTransaction({ db in try Self.dataVersion(db) }) else { continue }
            if let before = seen.version, version != before { send(.committed) }
            seen.version = version
        }
    }

    private static func dataVersion(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0
    }

    private func send(_ event: OtherProcessEvent) {
        for listener in state.withLock({ Array($0.listeners.values) }) { listener.yield(event) }
    }

    private func end() {
        let listeners = state.withLock { state in
            state.removed = true
            state.poll = nil
            defer { state.listeners = [:] }
            return Array(state.listeners.values)
        }
        for listener in listeners {
            listener.yield(.removed)
            listener.finish()
        }
    }

    private func leave(_ id: Int) {
        let poll: Task<Void, Never>? = state.withLock { state in
            state.listeners.removeValue(forKey: id)
            guard state.listeners.isEmpty else { return nil }
            defer { state.poll = nil }
            return state.poll
        }
        poll?.cancel()
    }
}

/// A database file as the file system tells it.
struct DatabaseFile: Sendable {
    let path: String

    /// nil for a database in memory.
    init?(path: String) {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file::memory:") else { return nil }
        self.path = path
    }

    /// Which file it is (another at the same path is another database); nil when it is gone.
    func identity() -> UInt64? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        return (attributes[.systemFileNumber] as? NSNumber)?.uint64Value
    }
}
