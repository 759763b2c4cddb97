import EventualAPI
import EventualStorage
import Logging
import SQLKit
import ServiceLifecycle

/// Forgets what has expired: idempotency answers past their 24 hours, access tokens past their
/// 7 days, throttle counts past their windows, applied sync change ids and deleted records past
/// the retention, the hours of filed usage events past the day their limit counts, and
/// attachments no record refers to (or uploads left unfinished) past their grace period.
/// Runs at start-up and then hourly.
struct Housekeeping: Service {
    let database: Database
    let idempotency: Idempotency
    let throttle: Throttle
    let appliedChangeRetention: Duration
    let logger: Logger
    /// nil: attachments are not collected (a test of the other purges).
    var attachments: AttachmentStore? = nil
    var interval: Duration = .seconds(3600)

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await sweep(now: UnixMillis.now())
            } catch {
                logger.warning("housekeeping failed; will retry", metadata: ["error": "\(LogSafe.describe(error))"])
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
        try await idempotency.purge(now: now)
        try await throttle.purge(now: now)
        let sync = SyncStore(database: database)
        try await sync.purgeAppliedChanges(before: now - appliedChangeRetention.milliseconds)
        // NB: the same horizon: a device offline longer is told to start over (SyncStore.pull).
        try await sync.purgeDeletedRecords(before: now - appliedChangeRetention.milliseconds)
        try await database.withConnection { sql in
            try await sql.delete(from: "access_tokens").where("expires_at", .lessThanOrEqual, now).run()
        }
        try await AnalyticsStore(database: database).purgeFilingHours(now: now)
        try await attachments?.collectGarbage(now: now)
    }
}
