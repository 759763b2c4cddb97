import Foundation
import Logging
import SQLKit
import Testing
@testable import EventualServer
import StorageTestSupport

@Suite("A locked or full database answers 503 and recovers", .timeLimit(.minutes(3)))
struct StorageFailureTests {
    @Test func aWriteLockHeldByAnotherProcessIsA503WithRetryAfterNotAHang() async throws {
        try await withServer(.sqlite, mode: .live, configure: { $0.busyTimeout = .milliseconds(300) }) { api, location in
            let account = try await api.signUp()
            // Given another connection that holds SQLite's write lock
            let lock = try await ForeignWriteLock.hold(location)
            // When a registration (a write) comes in
            let started = ContinuousClock.now
            let refused = try await api.register(username: "blocked", email: "blocked@example.com")
            // Then it is answered 503 with Retry-After soon after the busy timeout, not after many seconds
            #expect(refused.status == .serviceUnavailable, "\(refused.text)")
            #expect(refused.headers[.retryAfter] != nil)
            #expect(try refused.error().message.contains("busy"))
            // NB: a server that waited for the lock would answer only once it is released, which
            // this test does after the answer: it would hang until the time limit (3 min). 20 s
            // tells the two apart and leaves a machine busy with the whole suite room (5.4 s was seen).
            #expect(ContinuousClock.now - started < .seconds(20))
            // And reads keep working
            #expect(try await api.send(.get, "/users/me", headers: account.bearer).status == .ok)
            #expect(try await api.lookup(Barcodes.unique(), as: account).status == .ok)
            // And once the lock is released, the same write, retried after Retry-After, succeeds
            try await lock.release()
            let retryAfter = try #require(refused.headers[.retryAfter].flatMap(Int.init))
            try await Task.sleep(for: .seconds(retryAfter))
            #expect(try await api.register(username: "blocked", email: "blocked@example.com").status == .created)
        }
    }

    @Test func writersQueuedBehindAForeignLockAreAnsweredTogetherNotOneTimeoutEach() async throws {
        try await withServer(.sqlite, mode: .live, configure: { $0.busyTimeout = .seconds(3) }) { api, location in
            // Given another connection that holds SQLite's write lock
            let lock = try await ForeignWriteLock.hold(location)
            // When ten registrations arrive at once
            let client = ParallelClient(port: try #require(api.client.port))
            let answers = try await withThrowingTaskGroup(of: (status: Int, at: ContinuousClock.Instant).self) { group in
                for index in 0..<10 {
                    group.addTask {
                        let status = try await client.send("POST", "/users",
                                                           json: #"{"username":"queued\#(index)","email":"queued\#(index)@example.com","password":"long enough"}"#).status
                        return (status, ContinuousClock.now)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            try await lock.release()
            // Then all are 503, answered together: one each in turn would space them a busy timeout
            // (3 s) apart, 27 s from first to last. NB: the spread, not the total, is measured: a
            // machine busy with the whole suite delays them all alike; under two busy timeouts
            // tells "together" from "in turn" with room for that load (3.3 s was seen in CI).
            #expect(answers.map(\.status) == Array(repeating: 503, count: 10))
            let instants = answers.map(\.at)
            let spread = instants.max()! - instants.min()!
            #expect(spread < .seconds(6), "answers spread over \(spread)")
        }
    }

    @Test func aFullDiskIsA503ReadsKeepWorkingAndWritesRecoverWithoutRestart() async throws {
        try await withServer(.sqlite, mode: .live, configure: { $0.maxSQLiteBytes = 3 * 1024 * 1024 }) { api in
            // Given a database that fills up with images
            let account = try await api.signUp()
            let image = String(repeating: "A", count: 900 * 1024)
            var created: [String] = []
            var refused: Answer?
            for _ in 0..<8 {
                let barcode = Barcodes.unique()
                let token = try await api.sessionToken(barcode, as: account)
                let answer = try await api.send(.post, "/products", headers: account.bearer,
                                                json: #"{"token":"\#(token)","name":"n","barcode":"\#(barcode)","test":false,"img":"\#(image)"}"#)
                if answer.status == .created {
                    created.append(try answer.decode(ProductJSON.self).id)
                } else {
                    refused = answer
                    break
                }
            }
            // Then the write that does not fit is a 503 saying so, not a 500
            let full = try #require(refused)
            #expect(full.status == .serviceUnavailable, "\(full.text)")
            #expect(full.headers[.retryAfter] != nil)
            #expect(try full.error().message.contains("full"))
            #expect(!created.isEmpty)
            // And reads keep working
            #expect(try await api.send(.get, "/users/me", headers: account.bearer).status == .ok)
            #expect(try await api.lookup(Barcodes.unique(), as: account).status == .ok)
            // And once space is freed, writes work again without a restart
            for id in created {
                #expect(try await api.send(.delete, "/products/\(id)", headers: account.bearer).status == .ok)
            }
            let barcode = Barcodes.unique()
            let token = try await api.sessionToken(barcode, as: account)
            let again = try await api.send(.post, "/products", headers: account.bearer,
                                           json: #"{"token":"\#(token)","name":"n","barcode":"\#(barcode)","test":false,"img":"\#(image)"}"#)
            #expect(again.status == .created, "\(again.text)")
        }
    }
}
