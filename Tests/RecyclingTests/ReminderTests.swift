import Foundation
import Testing
@testable import Recycling

/// The streak reminder counts the streak still alive at the moment it is due, not the one a
/// score saved days ago showed; its text is what a phone shows, and the command adds how to act.
@Suite("Streak reminders", .timeLimit(.minutes(3)))
struct ReminderTests {
    @Test func aStreakEndingYesterdayCountsOnlyDaysWithPointsAndTheServersRunBeforeThem() {
        // A score saved on day 98 (a 40-day streak, points that day), points on day 99: 41 by day 100
        let saved = Streak.Saved(day: 98, streak: 40, pointsThatDay: 10)
        #expect(Streak.endingYesterday(today: 100, daysWithPoints: [98, 99], saved: saved) == 41)
        // Saved the same day, before any points that day: the server's streak is the one at risk
        #expect(Streak.endingYesterday(today: 100, daysWithPoints: [99], saved: .init(day: 100, streak: 5, pointsThatDay: 0)) == 5)
        // Saved the same day after points: the run up to yesterday
        #expect(Streak.endingYesterday(today: 100, daysWithPoints: [99, 100], saved: .init(day: 100, streak: 5, pointsThatDay: 20)) == 4)
        // A day without points since the saved day: the saved streak broke
        #expect(Streak.endingYesterday(today: 100, daysWithPoints: [], saved: .init(day: 97, streak: 8, pointsThatDay: 10)) == 0)
        #expect(Streak.endingYesterday(today: 100, daysWithPoints: [99], saved: .init(day: 95, streak: 8, pointsThatDay: 10)) == 1)
        // Nothing saved: only the device's own days
        #expect(Streak.endingYesterday(today: 100, daysWithPoints: [97, 98, 99], saved: nil) == 3)
    }

    @Test func aReminderSpeaksThePersonsLanguage() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        let ten = Date(timeIntervalSince1970: 10 * 3600), eight = Date(timeIntervalSince1970: 20 * 3600)
        for reminder in [Reminder.due(at: ten, timeZone: utc, streak: 0, pointsToday: 0),
                         Reminder.due(at: eight, timeZone: utc, streak: 3, pointsToday: 0)] {
            let text = try #require(reminder).title + " " + (reminder?.body ?? "")
            #expect(!text.contains("sustainu") && !text.contains("--"), "\(text)")
        }
    }

    @Test(.tags(.endToEnd)) func theStreakReminderIsNotShownDaysAfterTheStreakBroke() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            _ = try await phone.signUp()
            // Given a student who earned points today, and whose phone saved the score (a 1-day streak)
            #expect(try await phone.run(["scan", "--barcode", SharedData.pastryBarcode]).status == 0)
            let score = try #require(try json(try await phone.run(["score", "--json"])) as? [String: Any])
            #expect(score["streak"] as? Int == 1, "\(score)")
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
            func evening(inDays days: Int) throws -> String {
                let day = try #require(calendar.date(byAdding: .day, value: days, to: Date()))
                let parts = calendar.dateComponents([.year, .month, .day], from: day)
                return String(format: "%04d-%02d-%02dT20:05", parts.year!, parts.month!, parts.day!)
            }
            // When the phone asks at 20:05 tomorrow, with no points yet that day
            let tomorrow = try await phone.offline(["reminders", "--now", try evening(inDays: 1)])
            // Then the streak is at risk, and the command says how to act on it
            #expect(tomorrow.status == 0 && tomorrow.stdout.contains("Don't lose your 1-day streak"), "\(tomorrow.stdout)\(tomorrow.stderr)")
            #expect(tomorrow.stdout.contains("sustainu scan"))
            // When it asks three days later, after two days without points
            let later = try await phone.offline(["reminders", "--now", try evening(inDays: 3)])
            // Then there is no streak left to lose, and no reminder
            #expect(later.status == 0 && later.stdout.hasPrefix("No reminder is due now"), "\(later.stdout)\(later.stderr)")
            let due = try #require(try json(try await phone.offline(["reminders", "--now", try evening(inDays: 3), "--json"])) as? [Any])
            #expect(due.isEmpty)
        }
    }
}
