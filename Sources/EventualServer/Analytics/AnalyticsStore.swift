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
                inserted += try await sql.raw(query).all().count
            }
            return inserted
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
