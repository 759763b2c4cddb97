import Foundation
import Synchronization
import Testing
@testable import EventualKit

/// A fake origin: counts fetches and can be taken offline.
final class Origin: Sendable {
    private let state = Mutex((fetches: 0, online: true, value: "v1", etag: "e1", lastETagSeen: String?.none))
    var fetches: Int { state.withLock { $0.fetches } }
    var lastETagSeen: String? { state.withLock { $0.lastETagSeen } }
    func set(online: Bool) { state.withLock { $0.online = online } }
    func set(value: String, etag: String) { state.withLock { $0.value = value; $0.etag = etag } }

    func fetch(_ etag: String?) async throws -> FetchOutcome {
        let (online, value, current) = state.withLock { state in
            state.fetches += 1
            state.lastETagSeen = etag
            return (state.online, state.value, state.etag)
        }
        guard online else { throw RemoteFailure.unreachable("offline") }
        if etag == current { return .notModified }
        return .fresh(try JSONEncoder().encode(value), etag: current)
    }
}

@Suite("Cache policies", .timeLimit(.minutes(2)))
struct CachePolicyTests {
    func makeCache(_ scratch: ScratchFolder) throws -> ReadCache {
        ReadCache(store: try LocalStore(path: scratch.url.appendingPathComponent("c.sqlite").path))
    }

    @Test func noCopyAndNoNetworkIsATypedError() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let cache = try makeCache(scratch), origin = Origin()
        origin.set(online: false)
        for policy in [CachePolicy.cacheFirst(maxAge: .seconds(60)), .networkFirst(timeout: .seconds(1)), .staleWhileRevalidate] {
            await #expect(throws: CacheError.self) {
                try await cache.read("k", as: String.self, policy: policy, fetch: origin.fetch)
            }
        }
    }

    @Test func cacheFirstServesAYoungCopyWithoutTheNetwork() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let cache = try makeCache(scratch), origin = Origin()
        let first = try await cache.read("k", as: String.self, policy: .cacheFirst(maxAge: .seconds(60)), fetch: origin.fetch)
        let second = try await cache.read("k", as: String.self, policy: .cacheFirst(maxAge: .seconds(60)), fetch: origin.fetch)
        #expect(first.source == .network && second.source == .cache)
        #expect(second.value == "v1" && second.fetchedAt == first.fetchedAt)
        #expect(origin.fetches == 1)
    }

    @Test func cacheFirstRevalidatesAnOldCopyWithItsETag() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let cache = try makeCache(scratch), origin = Origin()
        _ = try await cache.read("k", as: String.self, policy: .cacheFirst(maxAge: .zero), fetch: origin.fetch)
        let again = try await cache.read("k", as: String.self, policy: .cacheFirst(maxAge: .zero), fetch: origin.fetch)
        #expect(origin.lastETagSeen == "e1")
        #expect(again.source == .network && again.value == "v1")
    }

    @Test func cacheFirstFallsBackToAnOldCopyWhenOffline() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let cache = try makeCache(scratch), origin = Origin()
        _ = try await cache.read("k", as: String.self, policy: .cacheFirst(maxAge: .zero), fetch: origin.fetch)
        origin.set(online: false)
        let offline = try await cache.read("k", as: String.self, policy: .cacheFirst(maxAge: .zero), fetch: origin.fetch)
        #expect(offline.source == .cache && offline.value == "v1")
    }

    @Test func networkFirstPrefersTheNetworkAndFallsBackToTheCopy() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let cache = try makeCache(scratch), origin = Origin()
        _ = try await cache.read("k", as: String.self, policy: .networkFirst(timeout: .seconds(1)), fetch: origin.fetch)
        origin.set(value: "v2", etag: "e2")
        let fresh = try await cache.read("k", as: String.self, policy: .networkFirst(timeout: .seconds(1)), fetch: origin.fetch)
        #expect(fresh.source == .network && fresh.value == "v2")
        origin.set(online: false)
        let fallback = try await cache.read("k", as: String.self, policy: .networkFirst(timeout: .seconds(1)), fetch: origin.fetch)
        #expect(fallback.source == .cache && fallback.value == "v2")
    }

    @Test func networkFirstGivesUpOnASlowNetworkAfterItsTimeout() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let cache = try makeCache(scratch), origin = Origin()
        _ = try await cache.read("k", as: String.self, policy: .networkFirst(timeout: .seconds(1)), fetch: origin.fetch)
        let slow = try await cache.read("k", as: String.self, policy: .networkFirst(timeout: .milliseconds(100))) { _ in
            try await Task.sleep(for: .seconds(30))
            return .fresh(Data(), etag: nil)
        }
        #expect(slow.source == .cache && slow.value == "v1")
    }

    @Test func staleWhileRevalidateAnswersFromTheCopyAndRefreshesIt() async throws {
        let scratch = try ScratchFolder(); defer { scratch.remove() }
        let cache = try makeCache(scratch), origin = Origin()
        _ = try await cache.read("k", as: String.self, policy: .staleWhileRevalidate, fetch: origin.fetch)
        origin.set(value: "v2", etag: "e2")
        let stale = try await cache.read("k", as: String.self, policy: .staleWhileRevalidate, fetch: origin.fetch)
        #expect(stale.source == .cache && stale.value == "v1")
        await cache.waitForRefreshes()
        let next = try #require(try cache.peek("k", as: String.self))
        #expect(next.value == "v2")
    }
}
