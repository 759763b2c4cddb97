import EventualAPI
import EventualStorage
import Foundation
import SQLKit

/// A usage event checked and ready to file.
struct FiledEvent: Sendable {
    let id: String
    let name: String
    let app: String
    let appVersion: String
    let platform: String
    let sessionID: String
    let occurredAt: Int64
    let subject: String?
    let qualifier: String?
    let amount: Double?
    /// A JSON object, keys sorted.
    let properties: String
}

/// The usage events: filed once per user and id, read by the questions.
struct AnalyticsStore: Sendable {
    /// Rows per multi-row INSERT: 13 bound values each, under both databases' limits.
    static let rowsPerStatement = 250

    let database: Database

    /// Files `events` for `userID` and answers how many were new; an id filed before is skipped.
    /// The new ones count in the user's byte quota (`Refusal.quotaExceeded` past it) and in the events
    /// they may file in 24 hours (`Refusal.limitReached` past it, with the seconds until enough of them
    /// are a day old); either refusal files nothing of the batch.
    func file(_ events: [FiledEvent], userID: String, now: Int64, quotas: Quotas) async throws -> Int {
        guard !events.isEmpty else { return 0 }
        let hour = now / Self.hourMillis
        // NB: checked before the transaction too, so that a person past the limit costs no writes.
        let recent = try await database.withConnection { sql in try await Self.filedHours(userID: userID, hour: hour, on: sql) }
        if recent.reduce(0, { $0 + $1.events }) >= Int64(quotas.eventsPerUserPerDay) {
            throw Self.tooMany(recent, adding: 1, limit: quotas.eventsPerUserPerDay, now: now)
        }
        return try await database.transaction { sql in
            var inserted = 0
            var bytes: Int64 = 0
            var activity: [ActivityKey: Int64] = [:]
            for chunk in events.chunks(of: Self.rowsPerStatement) {
                var query = SQLQueryString("""
                    INSERT INTO analytics_events (user_id, event_id, name, app, app_version, platform, session_id,
                        occurred_at, received_at, subject, qualifier, amount, properties) VALUES
                    """)
                for (index, event) in chunk.enumerated() {
                    query.appendInterpolation(unsafeRaw: index == 0 ? " (" : ", (")
                    query.appendInterpolation(bind: userID)
                    query.appendInterpolation(unsafeRaw: ", ")
                    query.appendInterpolation(binds: [event.id, event.name, event.app, event.appVersion, event.platform, event.sessionID])
                    query.appendInterpolation(unsafeRaw: ", ")
                    query.appendInterpolation(binds: [event.occurredAt, now])
                    query.appendInterpolation(unsafeRaw: ", ")
                    query.appendInterpolation(bind: event.subject)
                    query.appendInterpolation(unsafeRaw: ", ")
                    query.appendInterpolation(bind: event.qualifier)
                    query.appendInterpolation(unsafeRaw: ", ")
                    query.appendInterpolation(bind: event.amount)
                    query.appendInterpolation(unsafeRaw: ", ")
                    query.appendInterpolation(bind: event.properties)
                    query.appendInterpolation(unsafeRaw: ")")
                }
                // NB: RETURNING names only the rows inserted, so duplicates are counted without a second query.
                query.appendInterpolation(unsafeRaw: " ON CONFLICT (event_id, user_id) DO NOTHING RETURNING event_id")
                let filed = Set(try await sql.raw(query).all().map { try $0.decode(column: "event_id", as: String.self) })
                inserted += filed.count
                for event in chunk where filed.contains(event.id) {
                    activity[ActivityKey(app: event.app, hour: event.occurredAt / 3_600_000, platform: event.platform), default: 0] += 1
                    bytes += Self.bytes(of: event)
                }
            }
            guard inserted > 0 else { return 0 }
            let hours = try await Self.filedHours(userID: userID, hour: hour, on: sql)
            if hours.reduce(0, { $0 + $1.events }) + Int64(inserted) > Int64(quotas.eventsPerUserPerDay) {
                throw Self.tooMany(hours, adding: inserted, limit: quotas.eventsPerUserPerDay, now: now)
            }
            try await sql.insert(into: "analytics_filing").columns("user_id", "hour_bucket", "events")
                .values(SQLBind(userID), SQLBind(hour), SQLBind(Int64(inserted)))
                .onConflict(with: ["user_id", "hour_bucket"]) { update in
                    update.set("events", to: SQLBinaryExpression(SQLColumn("events", table: "analytics_filing"), .add, SQLExcludedColumn("events")))
                }
                .run()
            try await StorageUsage.add(bytes, for: userID, quota: quotas.bytesPerUser, on: sql,
                                       advice: "These usage events are not filed; the app's own data is kept")
            try await addActivity(activity, userID: userID, on: sql)
            return inserted
        }
    }

    static let hourMillis: Int64 = 3_600_000

    /// Forgets the hours of filing that the limit on events a day no longer counts.
    func purgeFilingHours(now: Int64) async throws {
        try await database.withConnection { sql in
            try await sql.delete(from: "analytics_filing").where("hour_bucket", .lessThanOrEqual, now / Self.hourMillis - 24).run()
        }
    }

    /// The bytes an event takes in the byte quota: its text in UTF-8 and three numbers (as the
    /// backfill of migration 10 counts them).
    static func bytes(of event: FiledEvent) -> Int64 {
        Int64([event.id, event.name, event.app, event.appVersion, event.platform, event.sessionID, event.subject ?? "",
               event.qualifier ?? "", event.properties].reduce(0) { $0 + $1.utf8.count } + 24)
    }

    /// The events the user filed in each of the last 24 hours and the current one, oldest first.
    private static func filedHours(userID: String, hour: Int64, on sql: any SQLDatabase) async throws -> [(hour: Int64, events: Int64)] {
        try await sql.select().columns("hour_bucket", "events").from("analytics_filing")
            .where("user_id", .equal, userID).where("hour_bucket", .greaterThan, hour - 24)
            .orderBy("hour_bucket", .ascending).all()
            .map { (try $0.decode(column: "hour_bucket", as: Int64.self), try $0.decode(column: "events", as: Int64.self)) }
    }

    /// The refusal of `adding` more events, with the seconds until the hours that leave room for them are a day old.
    private static func tooMany(_ hours: [(hour: Int64, events: Int64)], adding: Int, limit: Int, now: Int64) -> Refusal {
        var total = hours.reduce(0) { $0 + $1.events } + Int64(adding)
        var freedAt = now + 24 * hourMillis
        for entry in hours {
            total -= entry.events
            freedAt = (entry.hour + 24) * hourMillis
            if total <= Int64(limit) { break }
        }
        let seconds = Int(max(1, (freedAt - now + 999) / 1000))
        return Refusal.limitReached(
            "Usage events are limited to \(limit) a day, and this batch of \(adding) would pass it: send them again later", retryAfter: seconds)
    }

    private struct ActivityKey: Hashable {
        let app: String
        let hour: Int64
        let platform: String
    }

    /// Adds the newly filed events to the user's hours of activity, in one statement per 100 hours.
    private func addActivity(_ activity: [ActivityKey: Int64], userID: String, on sql: any SQLDatabase) async throws {
        for chunk in activity.sorted(by: { ($0.key.app, $0.key.hour, $0.key.platform) < ($1.key.app, $1.key.hour, $1.key.platform) })
            .chunks(of: 100) {
            var query = SQLQueryString("INSERT INTO analytics_activity (app, hour_bucket, platform, user_id, events) VALUES")
            for (index, entry) in chunk.enumerated() {
                query.appendInterpolation(unsafeRaw: index == 0 ? " (" : ", (")
                query.appendInterpolation(bind: entry.key.app)
                query.appendInterpolation(unsafeRaw: ", ")
                query.appendInterpolation(bind: entry.key.hour)
                query.appendInterpolation(unsafeRaw: ", ")
                query.appendInterpolation(binds: [entry.key.platform, userID])
                query.appendInterpolation(unsafeRaw: ", ")
                query.appendInterpolation(bind: entry.value)
                query.appendInterpolation(unsafeRaw: ")")
            }
            query.appendInterpolation(unsafeRaw: """
                 ON CONFLICT (app, hour_bucket, platform, user_id) DO UPDATE SET events = analytics_activity.events + excluded.events
                """)
            try await sql.raw(query).run()
        }
    }

    /// The rows of a question's SQL, each cell decoded by the column's kind.
    func answer(_ question: AnalyticsQuestion, range: AnalyticsRange) async throws -> [[AnalyticsCell]] {
        let columns = question.columns
        let rows = try await database.withConnection { sql in
            try await sql.raw(question.sql(range)).all().map { row in
                try columns.map { column in try AnalyticsCell.decode(row, column: column) }
            }
        }
        return question.finish(rows, range: range)
    }
}
