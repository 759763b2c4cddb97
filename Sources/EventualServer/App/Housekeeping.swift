import EventualAPI
import Logging
import SQLKit
import ServiceLifecycle

/// Forgets what has expired: idempotency answers past their 24 hours and access tokens past
/// their 7 days. Runs at start-up and then hourly.
struct Housekeeping: Service {
    let database: Database
    let logger: Logger
    var interval: Duration = .seconds(3600)

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await sweep(now: UnixMillis.now())
            } catch {
                logger.warning("housekeeping failed; will retry", metadata: ["error": "\(error)"])
            }
            // NB: a plain sleep would hold a graceful shutdown up for as long as the interval.
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            } catch {
                return
            }
        }
    }

    func sweep(now: Int64) async throws {
        try await Idempotency(database: database).purge(now: now)
        try await database.withConnection { sql in
            try await sql.delete(from: "access_tokens").where("expires_at", .lessThanOrEqual, now).run()
        }
    }
}
