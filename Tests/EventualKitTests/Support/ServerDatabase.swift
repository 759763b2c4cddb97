import EventualAPI
import EventualStorage
import Foundation
import Logging
import SQLKit
import Synchronization
import Testing
@testable import EventualServer

/// The database a live server runs on, caught as `withLiveServer` configures it, to run the
/// server's housekeeping at a chosen time and read what only the server sees (its byte quota).
final class ServerDatabase: Sendable {
    let location = Mutex<DatabaseLocation?>(nil)

    /// Catches the database of the configuration `withLiveServer(configure:)` hands it.
    func catchLocation(_ configuration: inout ServerConfiguration) {
        location.withLock { $0 = configuration.database }
    }

    private func with<T: Sendable>(_ body: (Database) async throws -> T) async throws -> T {
        let location = try #require(location.withLock { $0 })
        let database = try await Database.open(location, logger: Logger(label: "test-server-database"))
        do {
            let value = try await body(database)
            await database.close()
            return value
        } catch {
            await database.close()
            throw error
        }
    }

    /// Purges every deletion, as housekeeping does once the retention has passed; answers how many.
    func purgeDeletions() async throws -> Int {
        try await with { try await SyncStore(database: $0).purgeDeletedRecords(before: UnixMillis.now() + 60_000) }
    }

    /// Collects the attachments no record refers to, as housekeeping does once their grace period
    /// has passed; answers how many went.
    func collectAttachments() async throws -> Int {
        try await with { database in
            let store = AttachmentStore(database: database)
            return try await store.collectGarbage(now: UnixMillis.now() + store.limits.gracePeriod.milliseconds + 60_000)
        }
    }

    /// The bytes counted in everyone's quota together.
    func bytesCounted() async throws -> Int64 {
        try await with { database in
            try await database.withConnection { sql in
                try await sql.raw("SELECT CAST(COALESCE(SUM(bytes), 0) AS BIGINT) AS total FROM storage_usage").first()?
                    .decode(column: "total", as: Int64.self) ?? 0
            }
        }
    }

    /// The blobs (and uploads under way) stored, in every space.
    func attachmentsStored() async throws -> Int {
        try await with { database in
            try await database.withConnection { sql in
                try await sql.raw("SELECT COUNT(*) AS n FROM attachments").first()?.decode(column: "n", as: Int.self) ?? 0
            }
        }
    }
}
