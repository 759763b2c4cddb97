import EventualAPI
import Foundation

extension APIService {
    static let scoreDays = 30
    static let defaultScoreboardLimit = 10
    static let scoreboardLimits = 1...100
    static let defaultPackagingLimit = 1000
    static let packagingLimits = 1...10_000

    func getRecyclingScore(_ input: Operations.GetRecyclingScore.Input) async throws -> Operations.GetRecyclingScore.Output {
        let userID = try await authenticatedUserID()
        let timeZone = try Self.timeZone(input.query.timeZone)
        let stored = try await recycling.scans.days(of: userID)
        let score = RecyclingScore(days: stored.compactMap { key, value in LocalDay(text: key).map { ($0, value) } },
                                   today: LocalDay(Date(), in: timeZone), window: Self.scoreDays)
        return .ok(.init(body: .json(.init(
            total: score.total, today: score.todayPoints, streak: score.streak, bestStreak: score.bestStreak,
            awardedScansToday: try await recycling.scans.awardedInLastDay(of: userID, now: UnixMillis.now()), dailyCap: ScanStore.dailyCap,
            days: score.window.map { .init(day: $0.day.text, points: $0.points) }
        ))))
    }

    func getRecyclingScoreboard(_ input: Operations.GetRecyclingScoreboard.Input) async throws -> Operations.GetRecyclingScoreboard.Output {
        _ = try await authenticatedUserID()
        let limit = input.query.limit ?? Self.defaultScoreboardLimit
        guard Self.scoreboardLimits.contains(limit) else {
            throw APIError.badRequest("limit must be from \(Self.scoreboardLimits.lowerBound) to \(Self.scoreboardLimits.upperBound)")
        }
        let entries = try await recycling.scans.scoreboard(limit: limit)
        return .ok(.init(body: .json(.init(entries: entries.map { .init(username: $0.username, total: $0.total) }))))
    }

    func getRecyclingTips(_ input: Operations.GetRecyclingTips.Input) async throws -> Operations.GetRecyclingTips.Output {
        if try ETag.matches(input.headers.ifNoneMatch, RecyclingTips.etag) { return .notModified(.init()) }
        return .ok(.init(headers: .init(eTag: RecyclingTips.etag), body: .json(RecyclingTips.list)))
    }

    func getRecyclingPackaging(_ input: Operations.GetRecyclingPackaging.Input) async throws -> Operations.GetRecyclingPackaging.Output {
        let since = input.query.since ?? 0
        guard since >= 0 else { throw APIError.badRequest("since must be 0 or more") }
        let limit = input.query.limit ?? Self.defaultPackagingLimit
        guard Self.packagingLimits.contains(limit) else {
            throw APIError.badRequest("limit must be from \(Self.packagingLimits.lowerBound) to \(Self.packagingLimits.upperBound)")
        }
        let current = try await recycling.packaging.version()
        let etag = "\"pk-\(current)\""
        if try ETag.matches(input.headers.ifNoneMatch, etag) { return .notModified(.init()) }
        let page = try await recycling.packaging.changes(since: since, limit: limit)
        return .ok(.init(headers: .init(eTag: "\"pk-\(page.complete ? page.version : current)\""), body: .json(.init(
            version: page.version, complete: page.complete,
            entries: page.entries.map { .init(barcode: $0.gtin, parts: $0.parts.map { Components.Schemas.PackagingPart($0) }) }
        ))))
    }
}

/// A user's points per local day, summed up: total, today, streaks and the last days.
struct RecyclingScore {
    let total: Int64
    let todayPoints: Int
    /// Days in a row with points, ending today, or yesterday when today has none yet.
    let streak: Int
    let bestStreak: Int
    /// The last `window` days up to today, oldest first.
    let window: [(day: LocalDay, points: Int)]

    init(days: [(LocalDay, (points: Int, awarded: Int))], today: LocalDay, window size: Int) {
        let byDay = Dictionary(days.map { ($0.0, $0.1) }) { first, _ in first }
        total = byDay.values.reduce(0) { $0 + Int64($1.points) }
        todayPoints = byDay[today]?.points ?? 0
        func hasPoints(_ day: LocalDay) -> Bool { (byDay[day]?.points ?? 0) > 0 }
        var day = hasPoints(today) ? today : today.adding(days: -1)
        var run = 0
        while hasPoints(day) {
            run += 1
            day = day.adding(days: -1)
        }
        streak = run
        var best = 0, current = 0
        var previous: LocalDay?
        for day in byDay.keys.filter(hasPoints).sorted() {
            current = previous.map { $0.adding(days: 1) == day } == true ? current + 1 : 1
            best = max(best, current)
            previous = day
        }
        bestStreak = best
        window = (0..<size).reversed().map { offset in
            let day = today.adding(days: -offset)
            return (day, byDay[day]?.points ?? 0)
        }
    }
}
