import EventualAPI
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
    func file(_ events: [FiledEvent], userID: String, now: Int64) async throws -> Int {
        guard !events.isEmpty else { return 0 }
        return try await database.transaction { sql in
            var inserted = 0
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
                }
            }
            try await addActivity(activity, userID: userID, on: sql)
            return inserted
        }
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

extension Array {
    func chunks(of size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
