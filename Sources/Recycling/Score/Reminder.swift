import Foundation

/// The notifications SustainU shows: at 10:00 a daily nudge, at 20:00 a warning for a streak
/// about to break.
public struct Reminder: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable {
        case daily, streak
    }

    public let kind: Kind
    public let title: String
    public let body: String

    /// The hours the two reminders are due, in the person's time zone.
    static let dailyHour = 10
    static let streakHour = 20

    /// The reminder due at `now`: each is due for the hour after its time (10:00-10:59,
    /// 20:00-20:59). The streak one only when there is a streak to lose (`streak`: the days in a
    /// row with points up to yesterday) and no points today. Its text is what a phone shows.
    public static func due(at now: Date, timeZone: TimeZone, streak: Int, pointsToday: Int) -> Reminder? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        switch calendar.component(.hour, from: now) {
        case dailyHour:
            return Reminder(kind: .daily, title: "Time to recycle!",
                            body: "Scan something you are about to throw away to learn its bin and earn points.")
        case streakHour where streak > 0 && pointsToday == 0:
            return Reminder(kind: .streak, title: "Don't lose your \(streak)-day streak",
                            body: "Recycle something before midnight to keep it going.")
        default:
            return nil
        }
    }
}
