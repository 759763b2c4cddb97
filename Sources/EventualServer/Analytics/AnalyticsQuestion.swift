import EventualAPI
import Foundation
import SQLKit

/// A business question, answered by one SQL query that SQLite and PostgreSQL both run: only
/// columns, integer arithmetic, CASE, COUNT/SUM/AVG/MIN/MAX and window functions (no JSON or date
/// functions, which differ). Days and hours are UTC.
enum AnalyticsQuestion: String, Sendable, CaseIterable {
    // SustainU
    case usersPerPlatformHour = "users-per-platform-hour"
    case platformUsePerWeek = "platform-use-per-week"
    case scanTime = "scan-time"
    case mapConsultationsPerDay = "map-consultations-per-day"
    case mostVisitedPoints = "most-visited-points"
    case mostRecycledTrashTypes = "most-recycled-trash-types"
    case mapEntrySources = "map-entry-sources"
    case scanVsTips = "scan-vs-tips"
    case tipAttention = "tip-attention"
    case dailyReminderEffectiveness = "daily-reminder-effectiveness"
    case returnsWithin24h = "returns-within-24h"
    // SpendiQ
    case spentVsReceived = "spent-vs-received"
    case offerViewsPerShop = "offer-views-per-shop"
    // Tracking My Pantry
    case pantryScanResults = "pantry-scan-results"
    case pantryContributionsPerDay = "pantry-contributions-per-day"

    /// How a chart draws the answer: horizontal bars (a label and a value per row), or columns
    /// over an ordered axis (days, hours), one colour per series.
    enum Chart: Sendable {
        case bars(label: String, value: String)
        /// Horizontal bars of several values per row, one colour each (spent beside received).
        case pairedBars(label: String, values: [String])
        case columns(x: String, series: String?, value: String)
    }

    var app: AnalyticsApp {
        switch self {
        case .spentVsReceived, .offerViewsPerShop: return .spendiQ
        case .pantryScanResults, .pantryContributionsPerDay: return .pantry
        default: return .sustainU
        }
    }

    var title: String {
        switch self {
        case .usersPerPlatformHour: return "Users per platform per hour of day (UTC)"
        case .platformUsePerWeek: return "Platform use per week"
        case .scanTime: return "Scan time to recommendation per trash type (ms)"
        case .mapConsultationsPerDay: return "Map consultations per day"
        case .mostVisitedPoints: return "Most visited recycling points"
        case .mostRecycledTrashTypes: return "Most recycled trash types"
        case .mapEntrySources: return "Map entries: navbar vs main page"
        case .scanVsTips: return "Scan vs recycling tips"
        case .tipAttention: return "Tips that hold attention longest (seconds)"
        case .dailyReminderEffectiveness: return "Daily reminder: users who scan the same day after it"
        case .returnsWithin24h: return "Logins followed by a return within 24 hours"
        case .spentVsReceived: return "Spent vs received across users (minor units)"
        case .offerViewsPerShop: return "Offer views per shop"
        case .pantryScanResults: return "Barcode scans: known, unknown, offline"
        case .pantryContributionsPerDay: return "Products posted and votes per day"
        }
    }

    /// The columns the SQL returns, in order.
    var columns: [AnalyticsColumn] {
        switch self {
        case .usersPerPlatformHour: return [.init("platform", .text), .init("hour", .integer), .init("users", .integer)]
        case .platformUsePerWeek: return [.init("week", .week), .init("platform", .text), .init("users", .integer), .init("events", .integer)]
        case .scanTime:
            return [.init("trash_type", .text), .init("scans", .integer), .init("average_ms", .number), .init("p50_ms", .number),
                    .init("p95_ms", .number)]
        case .mapConsultationsPerDay: return [.init("day", .day), .init("consultations", .integer), .init("users", .integer)]
        case .mostVisitedPoints: return [.init("point", .text), .init("visits", .integer), .init("visitors", .integer)]
        case .mostRecycledTrashTypes: return [.init("trash_type", .text), .init("scans", .integer), .init("users", .integer)]
        case .mapEntrySources: return [.init("source", .text), .init("entries", .integer)]
        case .scanVsTips: return [.init("feature", .text), .init("uses", .integer), .init("users", .integer)]
        case .tipAttention:
            return [.init("trash_type", .text), .init("reads", .integer), .init("average_seconds", .number), .init("total_seconds", .number)]
        case .dailyReminderEffectiveness: return [.init("day", .day), .init("reminded", .integer), .init("scanned_after", .integer)]
        case .returnsWithin24h: return [.init("day", .day), .init("logins", .integer), .init("returned_within_24h", .integer)]
        case .spentVsReceived:
            return [.init("currency", .text), .init("spent_minor", .integer), .init("received_minor", .integer), .init("users", .integer)]
        case .offerViewsPerShop: return [.init("shop", .text), .init("views", .integer), .init("viewers", .integer), .init("offers", .integer)]
        case .pantryScanResults: return [.init("result", .text), .init("scans", .integer), .init("users", .integer)]
        case .pantryContributionsPerDay: return [.init("day", .day), .init("products_posted", .integer), .init("votes", .integer)]
        }
    }

    /// The columns of the answer: the SQL's, and a `share` worked out from them where the question asks for one.
    var answerColumns: [String] {
        let names = columns.map(\.name)
        switch self {
        case .mapEntrySources, .scanVsTips: return names + ["share"]
        case .dailyReminderEffectiveness, .returnsWithin24h: return names + ["share"]
        default: return names
        }
    }

    var chart: Chart {
        switch self {
        case .usersPerPlatformHour: return .columns(x: "hour", series: "platform", value: "users")
        case .platformUsePerWeek: return .columns(x: "week", series: "platform", value: "users")
        case .scanTime: return .bars(label: "trash_type", value: "average_ms")
        case .mapConsultationsPerDay: return .columns(x: "day", series: nil, value: "consultations")
        case .mostVisitedPoints: return .bars(label: "point", value: "visits")
        case .mostRecycledTrashTypes: return .bars(label: "trash_type", value: "scans")
        case .mapEntrySources: return .bars(label: "source", value: "share")
        case .scanVsTips: return .bars(label: "feature", value: "share")
        case .tipAttention: return .bars(label: "trash_type", value: "average_seconds")
        case .dailyReminderEffectiveness: return .columns(x: "day", series: nil, value: "share")
        case .returnsWithin24h: return .columns(x: "day", series: nil, value: "share")
        case .spentVsReceived: return .pairedBars(label: "currency", values: ["spent_minor", "received_minor"])
        case .offerViewsPerShop: return .bars(label: "shop", value: "views")
        case .pantryScanResults: return .bars(label: "result", value: "scans")
        case .pantryContributionsPerDay: return .columns(x: "day", series: nil, value: "products_posted")
        }
    }

    /// Every value of a chart's ordered axis over `range` (every hour, day or week, with events
    /// or not), so that a quiet day shows as a gap; nil for charts without one.
    func axis(_ range: AnalyticsRange) -> [String]? {
        switch self {
        case .usersPerPlatformHour:
            return (0..<24).map(String.init)
        case .platformUsePerWeek:
            let first = (range.fromDay - 4) / 7, last = (range.toDay - 4) / 7
            return (first...last).map { AnalyticsRange.format(day: $0 * 7 + 4) }
        case .mapConsultationsPerDay, .dailyReminderEffectiveness, .returnsWithin24h, .pantryContributionsPerDay:
            return range.days <= 92 ? (range.fromDay...range.toDay).map(AnalyticsRange.format(day:)) : nil
        default:
            return nil
        }
    }

    /// The query, over the events of `range`.
    func sql(_ range: AnalyticsRange) -> SQLQueryString {
        let app = self.app.rawValue
        let (start, end) = (range.start, range.end)
        typealias N = AnalyticsName
        switch self {
        case .usersPerPlatformHour:
            return """
                SELECT platform, hour_bucket % 24 AS hour, COUNT(DISTINCT user_id) AS users
                FROM analytics_activity
                WHERE app = \(bind: app) AND hour_bucket >= \(bind: start / 3_600_000) AND hour_bucket < \(bind: end / 3_600_000)
                GROUP BY platform, hour_bucket % 24
                ORDER BY platform, hour
                """
        case .platformUsePerWeek:
            // NB: 1970-01-05 (hour 96) was a Monday: weeks of 168 hours start on Mondays.
            return """
                SELECT (hour_bucket - 96) / 168 AS week, platform,
                       COUNT(DISTINCT user_id) AS users, CAST(SUM(events) AS BIGINT) AS events
                FROM analytics_activity
                WHERE app = \(bind: app) AND hour_bucket >= \(bind: start / 3_600_000) AND hour_bucket < \(bind: end / 3_600_000)
                GROUP BY (hour_bucket - 96) / 168, platform
                ORDER BY week, platform
                """
        case .scanTime:
            // Percentiles by nearest rank: the value at rank ceil(p × n / 100) of the sorted durations.
            return """
                SELECT subject AS trash_type, COUNT(*) AS scans, AVG(amount) AS average_ms,
                       MAX(CASE WHEN rnk = (total * 50 + 99) / 100 THEN amount END) AS p50_ms,
                       MAX(CASE WHEN rnk = (total * 95 + 99) / 100 THEN amount END) AS p95_ms
                FROM (SELECT subject, amount,
                             ROW_NUMBER() OVER (PARTITION BY subject ORDER BY amount) AS rnk,
                             COUNT(*) OVER (PARTITION BY subject) AS total
                      FROM analytics_events
                      WHERE app = \(bind: app) AND name = \(bind: N.scanAnswered) AND amount IS NOT NULL AND subject IS NOT NULL
                        AND occurred_at >= \(bind: start) AND occurred_at < \(bind: end)) ranked
                GROUP BY subject
                ORDER BY subject
                """
        case .mapConsultationsPerDay:
            return perDay(N.mapOpened, range, counting: "consultations")
        case .mostVisitedPoints:
            return topSubjects(N.pointVisited, range, label: "point", count: "visits", users: "visitors")
        case .mostRecycledTrashTypes:
            return topSubjects(N.scanAnswered, range, label: "trash_type", count: "scans", users: "users")
        case .mapEntrySources:
            return """
                SELECT subject AS source, COUNT(*) AS entries
                FROM analytics_events
                WHERE app = \(bind: app) AND name = \(bind: N.mapOpened) AND subject IS NOT NULL
                  AND occurred_at >= \(bind: start) AND occurred_at < \(bind: end)
                GROUP BY subject
                ORDER BY entries DESC, source
                """
        case .scanVsTips:
            // NB: the name is a literal, not a bound value: PostgreSQL matches the GROUP BY expression
            // to the SELECT one only when they are the same text, and two binds are two parameters.
            return """
                SELECT CASE WHEN name = \(literal: N.scanStarted) THEN 'scan' ELSE 'tips' END AS feature,
                       COUNT(*) AS uses, COUNT(DISTINCT user_id) AS users
                FROM analytics_events
                WHERE app = \(bind: app) AND name IN (\(bind: N.scanStarted), \(bind: N.tipOpened))
                  AND occurred_at >= \(bind: start) AND occurred_at < \(bind: end)
                GROUP BY CASE WHEN name = \(literal: N.scanStarted) THEN 'scan' ELSE 'tips' END
                ORDER BY feature
                """
        case .tipAttention:
            return """
                SELECT subject AS trash_type, COUNT(*) AS reads, AVG(amount) AS average_seconds, SUM(amount) AS total_seconds
                FROM analytics_events
                WHERE app = \(bind: app) AND name = \(bind: N.tipClosed) AND subject IS NOT NULL AND amount IS NOT NULL
                  AND occurred_at >= \(bind: start) AND occurred_at < \(bind: end)
                GROUP BY subject
                ORDER BY average_seconds DESC, trash_type
                """
        case .dailyReminderEffectiveness:
            // A user reminded on a day counts once; they count as scanning after it when their last
            // scan answered that day came at or after their first reminder that day. NB: a join of
            // two per-user-per-day summaries, not a lookup per reminder (which read every event of
            // the user each time: two seconds at a million events).
            return """
                SELECT reminders.day AS day, COUNT(*) AS reminded,
                       SUM(CASE WHEN scans.last_at >= reminders.first_at THEN 1 ELSE 0 END) AS scanned_after
                FROM (SELECT user_id, occurred_at / 86400000 AS day, MIN(occurred_at) AS first_at
                      FROM analytics_events
                      WHERE app = \(bind: app) AND name = \(bind: N.notificationShown) AND subject = \(bind: AnalyticsEvent.Notification.dailyReminder.rawValue)
                        AND occurred_at >= \(bind: start) AND occurred_at < \(bind: end)
                      GROUP BY user_id, occurred_at / 86400000) reminders
                LEFT JOIN (SELECT user_id, occurred_at / 86400000 AS day, MAX(occurred_at) AS last_at
                           FROM analytics_events
                           WHERE app = \(bind: app) AND name = \(bind: N.scanAnswered)
                             AND occurred_at >= \(bind: start) AND occurred_at < \(bind: end)
                           GROUP BY user_id, occurred_at / 86400000) scans
                       ON scans.user_id = reminders.user_id AND scans.day = reminders.day
                GROUP BY reminders.day
                ORDER BY day
                """
        case .returnsWithin24h:
            // Each login, and whether the same user logged in again within the next 24 hours (which
            // may fall after the range: those logins are read too, and not counted themselves).
            return """
                SELECT occurred_at / 86400000 AS day, COUNT(*) AS logins,
                       SUM(CASE WHEN next_at IS NOT NULL AND next_at - occurred_at <= 86400000 THEN 1 ELSE 0 END) AS returned_within_24h
                FROM (SELECT occurred_at,
                             LEAD(occurred_at) OVER (PARTITION BY user_id ORDER BY occurred_at, event_id) AS next_at
                      FROM analytics_events
                      WHERE app = \(bind: app) AND name = \(bind: N.login)
                        AND occurred_at >= \(bind: start) AND occurred_at < \(bind: end + 86_400_000)) logins
                WHERE occurred_at < \(bind: end)
                GROUP BY occurred_at / 86400000
                ORDER BY day
                """
        case .spentVsReceived:
            return """
                SELECT qualifier AS currency,
                       SUM(CASE WHEN subject = 'expense' THEN amount ELSE 0 END) AS spent_minor,
                       SUM(CASE WHEN subject = 'income' THEN amount ELSE 0 END) AS received_minor,
                       COUNT(DISTINCT user_id) AS users
                FROM analytics_events
                WHERE app = \(bind: app) AND name = \(bind: N.transactionRecorded) AND qualifier IS NOT NULL AND amount IS NOT NULL
                  AND occurred_at >= \(bind: start) AND occurred_at < \(bind: end)
                GROUP BY qualifier
                ORDER BY currency
                """
        case .offerViewsPerShop:
            return """
                SELECT subject AS shop, COUNT(*) AS views, COUNT(DISTINCT user_id) AS viewers, COUNT(DISTINCT qualifier) AS offers
                FROM analytics_events
                WHERE app = \(bind: app) AND name = \(bind: N.offerViewed) AND subject IS NOT NULL
                  AND occurred_at >= \(bind: start) AND occurred_at < \(bind: end)
                GROUP BY subject
                ORDER BY views DESC, shop
                LIMIT 20
                """
        case .pantryScanResults:
            return topSubjects(N.productScanned, range, label: "result", count: "scans", users: "users")
        case .pantryContributionsPerDay:
            return """
                SELECT occurred_at / 86400000 AS day,
                       SUM(CASE WHEN name = \(bind: N.productPosted) THEN 1 ELSE 0 END) AS products_posted,
                       SUM(CASE WHEN name = \(bind: N.productVoted) THEN 1 ELSE 0 END) AS votes
                FROM analytics_events
                WHERE app = \(bind: app) AND name IN (\(bind: N.productPosted), \(bind: N.productVoted))
                  AND occurred_at >= \(bind: start) AND occurred_at < \(bind: end)
                GROUP BY occurred_at / 86400000
                ORDER BY day
                """
        }
    }

    private func perDay(_ name: String, _ range: AnalyticsRange, counting: String) -> SQLQueryString {
        var query: SQLQueryString = "SELECT occurred_at / 86400000 AS day, COUNT(*) AS "
        query.appendInterpolation(ident: counting)
        query.appendInterpolation(unsafeRaw: ", COUNT(DISTINCT user_id) AS users FROM analytics_events WHERE app = ")
        query.appendInterpolation(bind: app.rawValue)
        query.appendInterpolation(unsafeRaw: " AND name = ")
        query.appendInterpolation(bind: name)
        query.appendInterpolation(unsafeRaw: " AND occurred_at >= ")
        query.appendInterpolation(bind: range.start)
        query.appendInterpolation(unsafeRaw: " AND occurred_at < ")
        query.appendInterpolation(bind: range.end)
        query.appendInterpolation(unsafeRaw: " GROUP BY occurred_at / 86400000 ORDER BY day")
        return query
    }

    private func topSubjects(_ name: String, _ range: AnalyticsRange, label: String, count: String, users: String) -> SQLQueryString {
        var query: SQLQueryString = "SELECT subject AS "
        query.appendInterpolation(ident: label)
        query.appendInterpolation(unsafeRaw: ", COUNT(*) AS ")
        query.appendInterpolation(ident: count)
        query.appendInterpolation(unsafeRaw: ", COUNT(DISTINCT user_id) AS ")
        query.appendInterpolation(ident: users)
        query.appendInterpolation(unsafeRaw: " FROM analytics_events WHERE app = ")
        query.appendInterpolation(bind: app.rawValue)
        query.appendInterpolation(unsafeRaw: " AND name = ")
        query.appendInterpolation(bind: name)
        query.appendInterpolation(unsafeRaw: " AND subject IS NOT NULL AND occurred_at >= ")
        query.appendInterpolation(bind: range.start)
        query.appendInterpolation(unsafeRaw: " AND occurred_at < ")
        query.appendInterpolation(bind: range.end)
        query.appendInterpolation(unsafeRaw: " GROUP BY subject ORDER BY 2 DESC, 1 LIMIT 20")
        return query
    }

    /// The SQL's rows made into the answer: shares worked out, hours without users shown as 0.
    func finish(_ rows: [[AnalyticsCell]], range: AnalyticsRange) -> [[AnalyticsCell]] {
        switch self {
        case .mapEntrySources, .scanVsTips:
            let total = rows.reduce(0.0) { $0 + ($1[1].doubleValue ?? 0) }
            return rows.map { $0 + [Self.share($0[1].doubleValue ?? 0, of: total)] }
        case .dailyReminderEffectiveness, .returnsWithin24h:
            return rows.map { $0 + [Self.share($0[2].doubleValue ?? 0, of: $0[1].doubleValue ?? 0)] }
        default:
            return rows
        }
    }

    /// A fraction rounded to four places (0.1234), or null when there is nothing to divide.
    static func share(_ part: Double, of whole: Double) -> AnalyticsCell {
        whole > 0 ? .number((part / whole * 10_000).rounded() / 10_000) : .null
    }

    /// The questions of one app, in the dashboard's order.
    static func of(_ app: AnalyticsApp) -> [AnalyticsQuestion] { allCases.filter { $0.app == app } }
}
