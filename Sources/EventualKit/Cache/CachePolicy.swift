import EventualAPI
import Foundation
import GRDB
import Synchronization

/// How a read of server-owned data (knowledge-base look-ups, recycling points, offers) uses
/// the local copy and the network.
public enum CachePolicy: Sendable, Equatable {
    /// The local copy if it is younger than `maxAge`; else the network, falling back to any copy.
    case cacheFirst(maxAge: Duration)
    /// The network, falling back to the copy when it fails or takes longer than `timeout`.
    case networkFirst(timeout: Duration)
    /// The copy at once when there is one, refreshed in the background for the next read.
    case staleWhileRevalidate
}

/// Where a result came from.
public enum CacheSource: String, Sendable, Equatable {
    case network, cache
}

/// A value with its provenance, so a screen can say "as of 3 hours ago".
public struct Cached<Value: Sendable>: Sendable {
    public let value: Value
    public let source: CacheSource
    /// Unix milliseconds when the server sent this value.
    public let fetchedAt: Int64

    /// How old the value is, in seconds.
    public func age(now: Int64 = UnixMillis.now()) -> Int64 { max(0, now - fetchedAt) / 1000 }
}

/// What a fetch from the server produced.
public enum FetchOutcome: Sendable {
    /// A new body, with its ETag if the server sent one.
    case fresh(Data, etag: String?)
    /// The server confirmed the stored copy (304 to `If-None-Match`).
    case notModified
}

/// Reading server data gives this when there is neither a copy nor a network.
public enum CacheError: Error, Equatable, CustomStringConvertible {
    case needsConnectionForFirstLoad(key: String, reason: String)

    public var description: String {
        switch self {
        case .needsConnectionForFirstLoad(let key, let reason) where RemoteFailure.isSilence(reason):
            return "The server is not answering, and there is no saved copy of \(key): try again once it answers (\(reason))"
        case .needsConnectionForFirstLoad(let key, let reason):
            return "No connection and no saved copy of \(key): connect once to load it (\(reason))"
        }
    }
}

/// Server-owned data kept in the user's database, read by a `CachePolicy`.
public struct ReadCache: Sendable {
    let store: LocalStore
    /// Runs background revalidations (`staleWhileRevalidate`); tests may wait on them.
    let refreshes: RefreshTracker

    public init(store: LocalStore) {
        self.store = store
        self.refreshes = RefreshTracker()
    }

    /// Reads `key` by `policy`. `fetch` gets the stored ETag and asks the server.
    public func read<Value: Codable & Sendable>(
        _ key: String,
        as type: Value.Type,
        policy: CachePolicy,
        fetch: @escaping @Sendable (_ etag: String?) async throws -> FetchOutcome
    ) async throws -> Cached<Value> {
        let stored = try entry(key)
        switch policy {
        case .cacheFirst(let maxAge):
            // NB: younger than `maxAge`, strictly: a copy fetched this very millisecond is not
            // fresh for `maxAge: .zero` ("always ask"), which `<=` served from the cache.
            if let stored, UnixMillis.now() - stored.fetchedAt < maxAge.milliseconds {
                return try decode(stored, source: .cache)
            }
            return try await network(key, stored: stored, fetch: fetch)
        case .networkFirst(let timeout):
            do {
                return try await withDeadline(timeout) { try await self.network(key, stored: stored, fetch: fetch, fallBack: false) }
            } catch {
                guard let stored else { throw CacheError.needsConnectionForFirstLoad(key: key, reason: Self.reason(error)) }
                return try decode(stored, source: .cache)
            }
        case .staleWhileRevalidate:
            guard let stored else { return try await network(key, stored: nil, fetch: fetch) }
            refreshes.start { _ = try? await self.network(key, stored: stored, fetch: fetch, fallBack: false) as Cached<Value> }
            return try decode(stored, source: .cache)
        }
    }

    /// Stores a value the app got some other way (e.g. what the user just created).
    public func put<Value: Encodable>(_ key: String, value: Value, fetchedAt: Int64 = UnixMillis.now()) throws {
        let body = try JSONEncoder.sorted.encode(value)
        try store.writer.write { db in try Self.save(key: key, body: body, etag: nil, fetchedAt: fetchedAt, db) }
    }

    /// The stored value of `key`, if any, whatever its age.
    public func peek<Value: Decodable & Sendable>(_ key: String, as type: Value.Type) throws -> Cached<Value>? {
        try entry(key).map { try decode($0, source: .cache) }
    }

    /// Waits for background revalidations started so far.
    public func waitForRefreshes() async { await refreshes.waitAll() }

    // MARK: -

    struct Entry {
        let body: Data
        let etag: String?
        let fetchedAt: Int64
    }

    private func entry(_ key: String) throws -> Entry? {
        try store.reader.read { db in
            try Row.fetchOne(db, sql: "SELECT body, etag, fetched_at FROM eventual_cache WHERE key = ?", arguments: [key])
                .map { Entry(body: $0["body"], etag: $0["etag"], fetchedAt: $0["fetched_at"]) }
        }
    }

    private func network<Value: Codable & Sendable>(
        _ key: String, stored: Entry?, fetch: @Sendable (String?) async throws -> FetchOutcome, fallBack: Bool = true
    ) async throws -> Cached<Value> {
        let outcome: FetchOutcome
        do {
            outcome = try await fetch(stored?.etag)
        } catch {
            guard fallBack, let stored else {
                if stored == nil { throw CacheError.needsConnectionForFirstLoad(key: key, reason: Self.reason(error)) }
                throw error
            }
            return try decode(stored, source: .cache)
        }
        let now = UnixMillis.now()
        switch outcome {
        case .fresh(let body, let etag):
            let value = try JSONDecoder().decode(Value.self, from: body)
            try await store.writer.write { db in try Self.save(key: key, body: body, etag: etag, fetchedAt: now, db) }
            return Cached(value: value, source: .network, fetchedAt: now)
        case .notModified:
            guard let stored else { throw CacheError.needsConnectionForFirstLoad(key: key, reason: "304 without a stored copy") }
            try await store.writer.write { db in
                try db.execute(sql: "UPDATE eventual_cache SET fetched_at = ? WHERE key = ?", arguments: [now, key])
            }
            return Cached(value: try JSONDecoder().decode(Value.self, from: stored.body), source: .network, fetchedAt: now)
        }
    }

    private func decode<Value: Decodable>(_ entry: Entry, source: CacheSource) throws -> Cached<Value> {
        Cached(value: try JSONDecoder().decode(Value.self, from: entry.body), source: source, fetchedAt: entry.fetchedAt)
    }

    private static func save(key: String, body: Data, etag: String?, fetchedAt: Int64, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO eventual_cache (key, body, etag, fetched_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (key) DO UPDATE SET body = excluded.body, etag = excluded.etag, fetched_at = excluded.fetched_at
            """, arguments: [key, body, etag, fetchedAt])
    }

    private static func reason(_ error: any Error) -> String {
        RemoteFailure.from(error).description
    }
}

/// Runs `body`, throwing `DeadlineExceeded` if it takes longer than `timeout`.
func withDeadline<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw DeadlineExceeded()
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

struct DeadlineExceeded: Error, CustomStringConvertible {
    var description: String { "the server took too long to answer" }
}

/// Background tasks a test can wait for.
final class RefreshTracker: Sendable {
    private let tasks = Mutex<[Task<Void, Never>]>([])

    func start(_ body: @escaping @Sendable () async -> Void) {
        let task = Task { await body() }
        tasks.withLock { $0.append(task) }
    }

    func waitAll() async {
        let pending = tasks.withLock { tasks in
            defer { tasks.removeAll() }
            return tasks
        }
        for task in pending { await task.value }
    }
}
