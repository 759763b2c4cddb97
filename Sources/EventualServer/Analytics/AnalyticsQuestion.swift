import EventualAPI
import Foundation
import SQLKit

/// A business question, whole in one value: its id (the URL's and the dashboard's), its app, its
/// title, the columns its SQL returns, how a chart draws it, and the SQL.
///
/// Every query runs on SQLite and PostgreSQL alike: only columns, integer arithmetic, CASE,
/// COUNT/SUM/AVG/MIN/MAX and window functions (no JSON or date functions, which differ). Days and
/// hours are UTC. A new question is one more `static let`, listed in `allCases`.
struct AnalyticsQuestion: Sendable, CaseIterable, RawRepresentable {
    /// How a chart draws the answer: horizontal bars (a label and a value per row), or columns
    /// over an ordered axis (days, hours), one colour per series.
    enum Chart: Sendable {
        case bars(label: String, value: String)
        /// Horizontal bars of several values per row, one colour each (spent beside received).
        case pairedBars(label: String, values: [String])
        case columns(x: String, series: String?, value: String)
    }

    /// The ordered axis of a columns chart, every value of which is drawn (a quiet day shows as a gap).
    enum Axis: Sendable {
        case hoursOfDay
        case weeks
        /// Every day of a range of at most 92 days (longer ones draw the rows' own days).
        case days
    }

    /// A `share` column worked out from the SQL's: a fraction rounded to four places.
    enum Share: Sendable {
        /// Column `column` of the row over its sum on all rows.
        case ofTotal(column: Int)
        /// Column `part` of the row over its column `whole`.
        case ofRow(part: Int, whole: Int)
    }

    /// The events a query reads: one app's, from `start` to just before `end` (Unix ms).
    struct Span: Sendable {
        let app: String
        let start: Int64
        let end: Int64
    }

    let id: String
    let app: AnalyticsApp
    let title: String
    /// The columns the SQL returns, in order.
    let columns: [AnalyticsColumn]
    let chart: Chart
    var axis: Axis? = nil
    var share: Share? = nil
    let query: @Sendable (Span) -> SQLQueryString

    var rawValue: String { id }

    init?(rawValue: String) {
        guard let question = Self.allCases.first(where: { $0.id == rawValue }) else { return nil }
        self = question
    }

    init(id: String, app: AnalyticsApp, title: String, columns: [AnalyticsColumn], chart: Chart, axis: Axis? = nil,
         share: Share? = nil, sql: @escaping @Sendable (Span) -> SQLQueryString) {
        self.id = id
        self.app = app
        self.title = title
        self.columns = columns
        self.chart = chart
        self.axis = axis
        self.share = share
        self.query = sql
    }

    /// Every question, in the dashboard's order.
    static let allCases: [AnalyticsQuestion] = [
        usersPerPlatformHour, platformUsePerWeek, scanTime, mapConsultationsPerDay, mostVisitedPoints, mostRecycledTrashTypes,
        mapEntrySources, scanVsTips, tipAttention, dailyReminderEffectiveness, returnsWithin24h,
        spentVsReceived, offerViewsPerShop,
        pantryScanResults, pantryContributionsPerDay,
    ]

    /// The questions of one app, in the dashboard's order.
    /// The questions of one app, in the dashboard's order: a deployed app that has none of its
    /// own (`eventual-server apps deploy`) gets the questions every app can be asked (`anyApp`).
    static func of(_ app: AnalyticsApp) -> [AnalyticsQuestion] {
        let own = allCases.filter { $0.app == app }
        return own.isEmpty ? anyApp(app) : own
    }

    /// What any app's events answer: its events per day with their users, and its most sent events.
    static func anyApp(_ app: AnalyticsApp) -> [AnalyticsQuestion] {
        [
            AnalyticsQuestion(
                id: "\(app.rawValue)-events-per-day", app: app, title: "Events and users per day",
                columns: [.init("day", .day), .init("events", .integer), .init("users", .integer)],
                chart: .columns(x: "day", series: nil, value: "events"), axis: .days
            ) { span in
                """
                SELECT occurred_at / 86400000 AS day, COUNT(*) AS events, COUNT(DISTINCT user_id) AS users
                FROM analytics_events
                WHERE app = \(bind: span.app) AND occurred_at >= \(bind: span.start) AND occurred_at < \(bind: span.end)
                GROUP BY occurred_at / 86400000
                ORDER BY day
                """
            },
            AnalyticsQuestion(
                id: "\(app.rawValue)-top-events", app: app, title: "Most sent events",
                columns: [.init("event", .text), .init("events", .integer), .init("users", .integer)],
                chart: .bars(label: "event", value: "events")
            ) { span in
                """
                SELECT name AS event, COUNT(*) AS events, COUNT(DISTINCT user_id) AS users
                FROM analytics_events
                WHERE app = \(bind: span.app) AND occurred_at >= \(bind: span.start) AND occurred_at < \(bind: span.end)
                GROUP BY name
                ORDER BY events DESC, event
                LIMIT 20
                """
            },
        ]
    }

    /// The query, over the events of `range`.
    func sql(_ range: AnalyticsRange) -> SQLQueryString {
        query(Span(app: app.rawValue, start: range.start, end: range.end))
    }

    /// The columns of the answer: the SQL's, and a `share` worked out from them where the question asks for one.
    var answerColumns: [String] {
        columns.map(\.name) + (share == nil ? [] : ["share"])
    }

    /// Every value of a chart's ordered axis over `range` (every hour, day or week, with events
    /// or not), so that a quiet day shows as a gap; nil for charts without one.
    func axis(_ range: AnalyticsRange) -> [String]? {
        switch axis {
        case .hoursOfDay:
            return (0..<24).map(String.init)
        case .weeks:
            let first = (range.fromDay - 4) / 7, last = (range.toDay - 4) / 7
            return (first...last).map { AnalyticsRange.format(day: $0 * 7 + 4) }
        case .days:
            return range.days <= 92 ? (range.fromDay...range.toDay).map(AnalyticsRange.format(day:)) : nil
        case nil:
            return nil
        }
    }

    /// The SQL's rows made into the answer: shares worked out.
    func finish(_ rows: [[AnalyticsCell]], range: AnalyticsRange) -> [[AnalyticsCell]] {
        switch share {
        case .ofTotal(let column):
            let total = rows.reduce(0.0) { $0 + ($1[column].doubleValue ?? 0) }
            return rows.map { $0 + [Self.share($0[column].doubleValue ?? 0, of: total)] }
        case .ofRow(let part, let whole):
            return rows.map { $0 + [Self.share($0[part].doubleValue ?? 0, of: $0[whole].doubleValue ?? 0)] }
        case nil:
            return rows
        }
    }

    /// A fraction rounded to four places (0.1234), or null when there is nothing to divide.
    static func share(_ part: Double, of whole: Double) -> AnalyticsCell {
        whole > 0 ? .number((part / whole * 10_000).rounded() / 10_000) : .null
    }
}

// MARK: SustainU

extension AnalyticsQuestion {
    static let usersPerPlatformHour = AnalyticsQuestion(
        id: "users-per-platform-hour", app: .sustainU, title: "Users per platform per hour of day (UTC)",
        columns: [.init("platform", .text), .init("hour", .integer), .init("users", .integer)],
        chart: .columns(x: "hour", series: "platform", value: "users"), axis: .hoursOfDay
    ) { span in
        """
        SELECT platform, hour_bucket % 24 AS hour, COUNT(DISTINCT user_id) AS users
        FROM analytics_activity
        WHERE app = \(bind: span.app) AND hour_bucket >= \(bind: span.start / 3_600_000) AND hour_bucket < \(bind: span.end / 3_600_000)
        GROUP BY platform, hour_bucket % 24
        ORDER BY platform, hour
        """
    }

    static let platformUsePerWeek = AnalyticsQuestion(
        id: "platform-use-per-week", app: .sustainU, title: "Platform use per week",
        columns: [.init("week", .week), .init("platform", .text), .init("users", .integer), .init("events", .integer)],
        chart: .columns(x: "week", series: "platform", value: "users"), axis: .weeks
    ) { span in
        // NB: 1970-01-05 (hour 96) was a Monday: weeks of 168 hours start on Mondays.
        """
        SELECT (hour_bucket - 96) / 168 AS week, platform,
               COUNT(DISTINCT user_id) AS users, CAST(SUM(events) AS BIGINT) AS events
        FROM analytics_activity
        WHERE app = \(bind: span.app) AND hour_bucket >= \(bind: span.start / 3_600_000) AND hour_bucket < \(bind: span.end / 3_600_000)
        GROUP BY (hour_bucket - 96) / 168, platform
        ORDER BY week, platform
        """
    }

    static let scanTime = AnalyticsQuestion(
        id: "scan-time", app: .sustainU, title: "Scan time to recommendation per trash type (ms)",
        columns: [.init("trash_type", .text), .init("scans", .integer), .init("average_ms", .number), .init("p50_ms", .number),
                  .init("p95_ms", .number)],
        chart: .bars(label: "trash_type", value: "average_ms")
    ) { span in
        // Percentiles by nearest rank: the value at rank ceil(p × n / 100) of the sorted durations.
        """
        SELECT subject AS trash_type, COUNT(*) AS scans, AVG(amount) AS average_ms,
               MAX(CASE WHEN rnk = (total * 50 + 99) / 100 THEN amount END) AS p50_ms,
               MAX(CASE WHEN rnk = (total * 95 + 99) / 100 THEN amount END) AS p95_ms
        FROM (SELECT subject, amount,
                     ROW_NUMBER() OVER (PARTITION BY subject ORDER BY amount) AS rnk,
                     COUNT(*) OVER (PARTITION BY subject) AS total
              FROM analytics_events
              WHERE app = \(bind: span.app) AND name = \(bind: AnalyticsName.scanAnswered) AND amount IS NOT NULL AND subject IS NOT NULL
                AND occurred_at >= \(bind: span.start) AND occurred_at < \(bind: span.end)) ranked
        GROUP BY subject
        ORDER BY subject
        """
    }

    static let mapConsultationsPerDay = AnalyticsQuestion(
        id: "map-consultations-per-day", app: .sustainU, title: "Map consultations per day",
        columns: [.init("day", .day), .init("consultations", .integer), .init("users", .integer)],
        chart: .columns(x: "day", series: nil, value: "consultations"), axis: .days
    ) { span in
        perDay(AnalyticsName.mapOpened, span, counting: "consultations")
    }

    static let mostVisitedPoints = AnalyticsQuestion(
        id: "most-visited-points", app: .sustainU, title: "Most visited recycling points",
        columns: [.init("point", .text), .init("visits", .integer), .init("visitors", .integer)],
        chart: .bars(label: "point", value: "visits")
    ) { span in
        topSubjects(AnalyticsName.pointVisited, span, label: "point", count: "visits", users: "visitors")
    }

    static let mostRecycledTrashTypes = AnalyticsQuestion(
        id: "most-recycled-trash-types", app: .sustainU, title: "Most recycled trash types",
        columns: [.init("trash_type", .text), .init("scans", .integer), .init("users", .integer)],
        chart: .bars(label: "trash_type", value: "scans")
    ) { span in
        topSubjects(AnalyticsName.scanAnswered, span, label: "trash_type", count: "scans", users: "users")
    }

    static let mapEntrySources = AnalyticsQuestion(
        id: "map-entry-sources", app: .sustainU, title: "Map entries: navbar vs main page",
        columns: [.init("source", .text), .init("entries", .integer)],
        chart: .bars(label: "source", value: "share"), share: .ofTotal(column: 1)
    ) { span in
        """
        SELECT subject AS source, COUNT(*) AS entries
        FROM analytics_events
        WHERE app = \(bind: span.app) AND name = \(bind: AnalyticsName.mapOpened) AND subject IS NOT NULL
          AND occurred_at >= \(bind: span.start) AND occurred_at < \(bind: span.end)
        GROUP BY subject
        ORDER BY entries DESC, source
        """
    }

    static let scanVsTips = AnalyticsQuestion(
        id: "scan-vs-tips", app: .sustainU, title: "Scan vs recycling tips",
        columns: [.init("feature", .text), .init("uses", .integer), .init("users", .integer)],
        chart: .bars(label: "feature", value: "share"), share: .ofTotal(column: 1)
    ) { span in
        // NB: the name is a literal, not a bound value: PostgreSQL matches the GROUP BY expression
        // to the SELECT one only when they are the same text, and two binds are two parameters.
        """
        SELECT CASE WHEN name = \(literal: AnalyticsName.scanStarted) THEN 'scan' ELSE 'tips' END AS feature,
               COUNT(*) AS uses, COUNT(DISTINCT user_id) AS users
        FROM analytics_events
        WHERE app = \(bind: span.app) AND name IN (\(bind: AnalyticsName.scanStarted), \(bind: AnalyticsName.tipOpened))
          AND occurred_at >= \(bind: span.start) AND occurred_at < \(bind: span.end)
        GROUP BY CASE WHEN name = \(literal: AnalyticsName.scanStarted) THEN 'scan' ELSE 'tips' END
        ORDER BY feature
        """
    }

    static let tipAttention = AnalyticsQuestion(
        id: "tip-attention", app: .sustainU, title: "Tips that hold attention longest (seconds)",
        columns: [.init("trash_type", .text), .init("reads", .integer), .init("average_seconds", .number), .init("total_seconds", .number)],
        chart: .bars(label: "trash_type", value: "average_seconds")
    ) { span in
        """
        SELECT subject AS trash_type, COUNT(*) AS reads, AVG(amount) AS average_seconds, SUM(amount) AS total_seconds
        FROM analytics_events
        WHERE app = \(bind: span.app) AND name = \(bind: AnalyticsName.tipClosed) AND subject IS NOT NULL AND amount IS NOT NULL
          AND occurred_at >= \(bind: span.start) AND occurred_at < \(bind: span.end)
        GROUP BY subject
        ORDER BY average_seconds DESC, trash_type
        """
    }

    static let dailyReminderEffectiveness = AnalyticsQuestion(
        id: "daily-reminder-effectiveness", app: .sustainU, title: "Daily reminder: users who scan the same day after it",
        columns: [.init("day", .day), .init("reminded", .integer), .init("scanned_after", .integer)],
        chart: .columns(x: "day", series: nil, value: "share"), axis: .days, share: .ofRow(part: 2, whole: 1)
    ) { span in
        // A user reminded on a day counts once; they count as scanning after it when their last
        // scan answered that day came at or after their first reminder that day. NB: a join of
        // two per-user-per-day summaries, not a lookup per reminder (which read every event of
        // the user each time: two seconds at a million events).
        """
        SELECT reminders.day AS day, COUNT(*) AS reminded,
               SUM(CASE WHEN scans.last_at >= reminders.first_at THEN 1 ELSE 0 END) AS scanned_after
        FROM (SELECT user_id, occurred_at / 86400000 AS day, MIN(occurred_at) AS first_at
              FROM analytics_events
              WHERE app = \(bind: span.app) AND name = \(bind: AnalyticsName.notificationShown) AND subject = \(bind: AnalyticsEvent.Notification.dailyReminder.rawValue)
                AND occurred_at >= \(bind: span.start) AND occurred_at < \(bind: span.end)
              GROUP BY user_id, occurred_at / 86400000) reminders
        LEFT JOIN (SELECT user_id, occurred_at / 86400000 AS day, MAX(occurred_at) AS last_at
                   FROM analytics_events
                   WHERE app = \(bind: span.app) AND name = \(bind: AnalyticsName.scanAnswered)
                     AND occurred_at >= \(bind: span.start) AND occurred_at < \(bind: span.end)
                   GROUP BY user_id, occurred_at / 86400000) scans
               ON scans.user_id = reminders.user_id AND scans.day = reminders.day
        GROUP BY reminders.day
        ORDER BY day
        """
    }

    static let returnsWithin24h = AnalyticsQuestion(
        id: "returns-within-24h", app: .sustainU, title: "Logins followed by a return within 24 hours",
        columns: [.init("day", .day), .init("logins", .integer), .init("returned_within_24h", .integer)],
        chart: .columns(x: "day", series: nil, value: "share"), axis: .days, share: .ofRow(part: 2, whole: 1)
    ) { span in
        // Each login, and whether the same user logged in again within the next 24 hours (which
        // may fall after the range: those logins are read too, and not counted themselves).
        """
        SELECT occurred_at / 86400000 AS day, COUNT(*) AS logins,
               SUM(CASE WHEN next_at IS NOT NULL AND next_at - occurred_at <= 86400000 THEN 1 ELSE 0 END) AS returned_within_24h
        FROM (SELECT occurred_at,
                     LEAD(occurred_at) OVER (PARTITION BY user_id ORDER BY occurred_at, event_id) AS next_at
              FROM analytics_events
              WHERE app = \(bind: span.app) AND name = \(bind: AnalyticsName.login)
                AND occurred_at >= \(bind: span.start) AND occurred_at < \(bind: span.end + 86_400_000)) logins
        WHERE occurred_at < \(bind: span.end)
        GROUP BY occurred_at / 86400000
        ORDER BY day
        """
    }
}

// MARK: SpendiQ

extension AnalyticsQuestion {
    static let spentVsReceived = AnalyticsQuestion(
        id: "spent-vs-received", app: .spendiQ, title: "Spent vs received across users (minor units)",
        columns: [.init("currency", .text), .init("spent_minor", .integer), .init("received_minor", .integer), .init("users", .integer)],
        chart: .pairedBars(label: "currency", values: ["spent_minor", "received_minor"])
    ) { span in
        """
        SELECT qualifier AS currency,
               SUM(CASE WHEN subject = 'expense' THEN amount ELSE 0 END) AS spent_minor,
               SUM(CASE WHEN subject = 'income' THEN amount ELSE 0 END) AS received_minor,
               COUNT(DISTINCT user_id) AS users
        FROM analytics_events
        WHERE app = \(bind: span.app) AND name = \(bind: AnalyticsName.transactionRecorded) AND qualifier IS NOT NULL AND amount IS NOT NULL
          AND occurred_at >= \(bind: span.start) AND occurred_at < \(bind: span.end)
        GROUP BY qualifier
        ORDER BY currency
        """
    }

    static let offerViewsPerShop = AnalyticsQuestion(
        id: "offer-views-per-shop", app: .spendiQ, title: "Offer views per shop",
        columns: [.init("shop", .text), .init("views", .integer), .init("viewers", .integer), .init("offers", .integer)],
        chart: .bars(label: "shop", value: "views")
    ) { span in
        """
        SELECT subject AS shop, COUNT(*) AS views, COUNT(DISTINCT user_id) AS viewers, COUNT(DISTINCT qualifier) AS offers
        FROM analytics_events
        WHERE app = \(bind: span.app) AND name = \(bind: AnalyticsName.offerViewed) AND subject IS NOT NULL
          AND occurred_at >= \(bind: span.start) AND occurred_at < \(bind: span.end)
        GROUP BY subject
        ORDER BY views DESC, shop
        LIMIT 20
        """
    }
}

// MARK: Tracking My Pantry

extension AnalyticsQuestion {
    static let pantryScanResults = AnalyticsQuestion(
        id: "pantry-scan-results", app: .pantry, title: "Barcode scans: known, unknown, offline",
        columns: [.init("result", .text), .init("scans", .integer), .init("users", .integer)],
        chart: .bars(label: "result", value: "scans")
    ) { span in
        topSubjects(AnalyticsName.productScanned, span, label: "result", count: "scans", users: "users")
    }

    static let pantryContributionsPerDay = AnalyticsQuestion(
        id: "pantry-contributions-per-day", app: .pantry, title: "Products posted and votes per day",
        columns: [.init("day", .day), .init("products_posted", .integer), .init("votes", .integer)],
        chart: .columns(x: "day", series: nil, value: "products_posted"), axis: .days
    ) { span in
        """
        SELECT occurred_at / 86400000 AS day,
               SUM(CASE WHEN name = \(bind: AnalyticsName.productPosted) THEN 1 ELSE 0 END) AS products_posted,
               SUM(CASE WHEN name = \(bind: AnalyticsName.productVoted) THEN 1 ELSE 0 END) AS votes
        FROM analytics_events
        WHERE app = \(bind: span.app) AND name IN (\(bind: AnalyticsName.productPosted), \(bind: AnalyticsName.productVoted))
          AND occurred_at >= \(bind: span.start) AND occurred_at < \(bind: span.end)
        GROUP BY occurred_at / 86400000
        ORDER BY day
        """
    }
}

// MARK: Shapes several questions share

extension AnalyticsQuestion {
    /// Events named `name` per day, and the users who sent them.
    private static func perDay(_ name: String, _ span: Span, counting: String) -> SQLQueryString {
        var query: SQLQueryString = "SELECT occurred_at / 86400000 AS day, COUNT(*) AS "
        query.appendInterpolation(ident: counting)
        query.appendInterpolation(unsafeRaw: ", COUNT(DISTINCT user_id) AS users FROM analytics_events WHERE app = ")
        query.appendInterpolation(bind: span.app)
        query.appendInterpolation(unsafeRaw: " AND name = ")
        query.appendInterpolation(bind: name)
        query.appendInterpolation(unsafeRaw: " AND occurred_at >= ")
        query.appendInterpolation(bind: span.start)
        query.appendInterpolation(unsafeRaw: " AND occurred_at < ")
        query.appendInterpolation(bind: span.end)
        query.appendInterpolation(unsafeRaw: " GROUP BY occurred_at / 86400000 ORDER BY day")
        return query
    }

    /// The 20 subjects of events named `name` seen most, with how often and by how many users.
    private static func topSubjects(_ name: String, _ span: Span, label: String, count: String, users: String) -> SQLQueryString {
        var query: SQLQueryString = "SELECT subject AS "
        query.appendInterpolation(ident: label)
        query.appendInterpolation(unsafeRaw: ", COUNT(*) AS ")
        query.appendInterpolation(ident: count)
        query.appendInterpolation(unsafeRaw: ", COUNT(DISTINCT user_id) AS ")
        query.appendInterpolation(ident: users)
        query.appendInterpolation(unsafeRaw: " FROM analytics_events WHERE app = ")
        query.appendInterpolation(bind: span.app)
        query.appendInterpolation(unsafeRaw: " AND name = ")
        query.appendInterpolation(bind: name)
        query.appendInterpolation(unsafeRaw: " AND subject IS NOT NULL AND occurred_at >= ")
        query.appendInterpolation(bind: span.start)
        query.appendInterpolation(unsafeRaw: " AND occurred_at < ")
        query.appendInterpolation(bind: span.end)
        query.appendInterpolation(unsafeRaw: " GROUP BY subject ORDER BY 2 DESC, 1 LIMIT 20")
        return query
    }
}
