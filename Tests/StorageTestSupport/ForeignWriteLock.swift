import EventualStorage
import Logging
import SQLKit

/// Another connection to an SQLite database holding its write lock (`BEGIN IMMEDIATE`), as a
/// second process would, until `release()`: for the tests of a locked database, at the storage
/// layer (EventualStorageTests) and as the client sees it (EventualServerTests).
public struct ForeignWriteLock: Sendable {
    private let holder: Database
    private let release: AsyncStream<Void>.Continuation
    private let holding: Task<Void, any Error>

    public static func hold(_ location: DatabaseLocation) async throws -> ForeignWriteLock {
        let holder = try await Database.open(location, logger: Logger(label: "holder"))
        let release = AsyncStream<Void>.makeStream()
        let locked = AsyncStream<Void>.makeStream()
        let holding = Task {
            try await holder.withConnection { sql in
                try await sql.raw("BEGIN IMMEDIATE").run()
                locked.continuation.yield()
                for await _ in release.stream { break }
                try await sql.raw("ROLLBACK").run()
            }
        }
        for await _ in locked.stream { break }
        return ForeignWriteLock(holder: holder, release: release.continuation, holding: holding)
    }

    public func release() async throws {
        release.yield()
        try await holding.value
        await holder.close()
    }
}
