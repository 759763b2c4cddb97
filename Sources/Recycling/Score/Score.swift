import EventualAPI
import Foundation

/// The person's points and streaks, as the server counts them.
public struct Score: Sendable, Equatable, Codable {
    public let total: Int64
    public let today: Int
    public let streak: Int
    public let bestStreak: Int
    public let awardedScansToday: Int
    public let dailyCap: Int
    /// The last 30 days, oldest first.
    public let days: [DayPoints]

    init(_ score: Components.Schemas.RecyclingScore) {
        total = score.total
        today = score.today
        streak = score.streak
        bestStreak = score.bestStreak
        awardedScansToday = score.awardedScansToday
        dailyCap = score.dailyCap
        days = score.days.map { DayPoints(day: $0.day, points: $0.points) }
    }
}

/// Points earned on one day ("2026-11-23", in the person's time zone).
public struct DayPoints: Sendable, Equatable, Codable {
    public let day: String
    public let points: Int
}

/// A line of the leaderboard: never an email.
public struct LeaderboardEntry: Sendable, Equatable, Codable {
    public let username: String
    public let total: Int64
}

/// What a trash type is, which bin takes it and how to prepare it.
public struct Tip: Sendable, Equatable, Codable {
    public let trashType: String
    public let what: String
    public let bin: String
    public let binLabel: String
    public let prepare: String

    init(_ tip: Components.Schemas.Tip) {
        trashType = tip.trashType.rawValue
        what = tip.what
        bin = tip.bin.rawValue
        binLabel = tip.binLabel
        prepare = tip.prepare
    }
}
