import EventualAPI
import Foundation
import Testing
@testable import EventualServer

/// Each business question on a hand-made set of events whose answer is worked out here, on
/// SQLite and on PostgreSQL. Day 0 is Monday 2026-03-02 (UTC).
@Suite("Analytics: the business questions", .timeLimit(.minutes(4)))
struct AnalyticsQuestionTests {
    typealias N = AnalyticsName
    typealias K = AnalyticsKey

    @Test(arguments: Backend.available)
    func usersAreCountedOncePerPlatformAndHourAndWeek(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            let (a, b, c) = (try await api.signUp("a"), try await api.signUp("b"), try await api.signUp("c"))
            try await api.record([
                // Given a twice and b once on iOS between 10:00 and 11:00, c on Android at 10:30 and 23:59
                TestEvent(user: a, name: N.appOpened, at: AnalyticsDays.at(0, "10:15")),
                TestEvent(user: a, name: N.mapOpened, at: AnalyticsDays.at(0, "10:45"), properties: [K.source: "navbar"]),
                TestEvent(user: b, name: N.appOpened, at: AnalyticsDays.at(0, "10:05")),
                TestEvent(user: c, name: N.appOpened, at: AnalyticsDays.at(0, "10:30"), platform: "android"),
                TestEvent(user: c, name: N.scanStarted, at: AnalyticsDays.at(0, "23:59"), platform: "android"),
                // a again the next Monday at 08:00; c in another app, which does not count
                TestEvent(user: a, name: N.appOpened, at: AnalyticsDays.at(7, "08:00")),
                TestEvent(user: c, name: N.appOpened, at: AnalyticsDays.at(0, "10:00"), app: "spendiq"),
            ])
            let hours = try await api.ask("users-per-platform-hour", as: admin)
            #expect(hours.columns == ["platform", "hour", "users"])
            #expect(hours.rows == [["android", 10, 1], ["android", 23, 1], ["ios", 8, 1], ["ios", 10, 2]])
            // Only the second week when the range starts on day 1
            #expect(try await api.ask("users-per-platform-hour", from: 1, to: 13, as: admin).rows == [["ios", 8, 1]])

            let weeks = try await api.ask("platform-use-per-week", as: admin)
            #expect(weeks.columns == ["week", "platform", "users", "events"])
            #expect(weeks.rows == [["2026-03-02", "android", 1, 2], ["2026-03-02", "ios", 2, 3], ["2026-03-09", "ios", 1, 1]])
        }
    }

    @Test(arguments: Backend.available)
    func scanTimeHasAverageAndNearestRankPercentilesPerTrashType(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            let (a, b, c) = (try await api.signUp("a"), try await api.signUp("b"), try await api.signUp("c"))
            // Given plastic answered in 100, 200, … 1000 ms (a six times, b four) and glass in 1200, 800, 1000 ms (c)
            var events = (1...10).map { step in
                TestEvent(user: step <= 6 ? a : b, name: N.scanAnswered, at: AnalyticsDays.at(0, "09:\(10 + step)"),
                          properties: [K.trashType: "plastic", K.durationMs: .integer(Int64(step * 100))])
            }
            events += [1200, 800, 1000].map { ms in
                TestEvent(user: c, name: N.scanAnswered, at: AnalyticsDays.at(1, "09:00"), properties: [K.trashType: "glass", K.durationMs: .integer(ms)])
            }
            try await api.record(events)
            // Then plastic: average 550, p50 the 5th value (500), p95 the 10th (1000); glass: 1000, 1000, 1200
            let time = try await api.ask("scan-time", as: admin)
            #expect(time.columns == ["trash_type", "scans", "average_ms", "p50_ms", "p95_ms"])
            #expect(time.rows == [["glass", 3, 1000, 1000, 1200], ["plastic", 10, 550, 500, 1000]])
            // And plastic is the most recycled, by two users
            #expect(try await api.ask("most-recycled-trash-types", as: admin).rows == [["plastic", 10, 2], ["glass", 3, 1]])
        }
    }

    @Test(arguments: Backend.available)
    func mapConsultationsEntriesAndVisitedPointsAreCounted(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            let (a, b, c) = (try await api.signUp("a"), try await api.signUp("b"), try await api.signUp("c"))
            try await api.record([
                TestEvent(user: a, name: N.mapOpened, at: AnalyticsDays.at(0, "08:00"), properties: [K.source: "navbar"]),
                TestEvent(user: a, name: N.mapOpened, at: AnalyticsDays.at(0, "09:00"), properties: [K.source: "main"]),
                TestEvent(user: b, name: N.mapOpened, at: AnalyticsDays.at(0, "10:00"), properties: [K.source: "navbar"]),
                TestEvent(user: c, name: N.mapOpened, at: AnalyticsDays.at(1, "10:00"), properties: [K.source: "navbar"]),
                TestEvent(user: a, name: N.pointVisited, at: AnalyticsDays.at(0, "08:05"), properties: [K.pointID: "ML-1"]),
                TestEvent(user: a, name: N.pointVisited, at: AnalyticsDays.at(0, "09:05"), properties: [K.pointID: "ML-1"]),
                TestEvent(user: b, name: N.pointVisited, at: AnalyticsDays.at(0, "10:05"), properties: [K.pointID: "ML-1"]),
                TestEvent(user: c, name: N.pointVisited, at: AnalyticsDays.at(1, "10:05"), properties: [K.pointID: "SD-2"]),
            ])
            #expect(try await api.ask("map-consultations-per-day", as: admin).rows
                == [[.text(AnalyticsDays.date(0)), 3, 2], [.text(AnalyticsDays.date(1)), 1, 1]])
            let sources = try await api.ask("map-entry-sources", as: admin)
            #expect(sources.columns == ["source", "entries", "share"])
            #expect(sources.rows == [["navbar", 3, 0.75], ["main", 1, 0.25]])
            #expect(try await api.ask("most-visited-points", as: admin).rows == [["ML-1", 3, 2], ["SD-2", 1, 1]])
        }
    }

    @Test(arguments: Backend.available)
    func scanVersusTipsAndTipAttentionAreMeasured(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            let (a, b) = (try await api.signUp("a"), try await api.signUp("b"))
            try await api.record([
                TestEvent(user: a, name: N.scanStarted, at: AnalyticsDays.at(0, "08:00")),
                TestEvent(user: a, name: N.scanStarted, at: AnalyticsDays.at(0, "08:10")),
                TestEvent(user: b, name: N.scanStarted, at: AnalyticsDays.at(0, "08:20")),
                TestEvent(user: a, name: N.tipOpened, at: AnalyticsDays.at(0, "08:30"), properties: [K.trashType: "plastic"]),
                TestEvent(user: a, name: N.tipClosed, at: AnalyticsDays.at(0, "08:31"), properties: [K.trashType: "plastic", K.seconds: 10]),
                TestEvent(user: b, name: N.tipClosed, at: AnalyticsDays.at(0, "08:32"), properties: [K.trashType: "plastic", K.seconds: 20]),
                TestEvent(user: a, name: N.tipClosed, at: AnalyticsDays.at(1, "08:33"), properties: [K.trashType: "glass", K.seconds: 40.5]),
            ])
            #expect(try await api.ask("scan-vs-tips", as: admin).rows == [["scan", 3, 2, 0.75], ["tips", 1, 1, 0.25]])
            let attention = try await api.ask("tip-attention", as: admin)
            #expect(attention.columns == ["trash_type", "reads", "average_seconds", "total_seconds"])
            #expect(attention.rows == [["glass", 1, 40.5, 40.5], ["plastic", 2, 15, 30]])
        }
    }

    @Test(arguments: Backend.available)
    func aReminderCountsWhenTheSameUserScansLaterThatDay(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            let (a, b, c) = (try await api.signUp("a"), try await api.signUp("b"), try await api.signUp("c"))
            let reminder: [String: SyncValue] = [K.kind: "daily_reminder"]
            let scan: [String: SyncValue] = [K.trashType: "paper", K.durationMs: 900]
            try await api.record([
                // Day 0: a scans after the reminder; b scanned only before it; c (reminded twice) scans the next morning
                TestEvent(user: a, name: N.notificationShown, at: AnalyticsDays.at(0, "10:00"), properties: reminder),
                TestEvent(user: a, name: N.scanAnswered, at: AnalyticsDays.at(0, "12:00"), properties: scan),
                TestEvent(user: b, name: N.notificationShown, at: AnalyticsDays.at(0, "10:00"), properties: reminder),
                TestEvent(user: b, name: N.scanAnswered, at: AnalyticsDays.at(0, "09:00"), properties: scan),
                TestEvent(user: c, name: N.notificationShown, at: AnalyticsDays.at(0, "10:00"), properties: reminder),
                TestEvent(user: c, name: N.notificationShown, at: AnalyticsDays.at(0, "10:05"), properties: reminder),
                TestEvent(user: c, name: N.scanAnswered, at: AnalyticsDays.at(1, "08:00"), properties: scan),
                // Day 1: a is reminded and scans half an hour later
                TestEvent(user: a, name: N.notificationShown, at: AnalyticsDays.at(1, "10:00"), properties: reminder),
                TestEvent(user: a, name: N.scanAnswered, at: AnalyticsDays.at(1, "10:30"), properties: scan),
            ])
            let effect = try await api.ask("daily-reminder-effectiveness", as: admin)
            #expect(effect.columns == ["day", "reminded", "scanned_after", "share"])
            #expect(effect.rows == [[.text(AnalyticsDays.date(0)), 3, 1, 0.3333], [.text(AnalyticsDays.date(1)), 1, 1, 1]])
        }
    }

    @Test(arguments: Backend.available)
    func aLoginCountsAsReturnedWhenTheNextOneComesWithin24Hours(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            let (a, b) = (try await api.signUp("a"), try await api.signUp("b"))
            try await api.record([
                TestEvent(user: a, name: N.login, at: AnalyticsDays.at(0, "08:00")),  // next 12 h later: returned
                TestEvent(user: a, name: N.login, at: AnalyticsDays.at(0, "20:00")),  // next 37 h later: not
                TestEvent(user: a, name: N.login, at: AnalyticsDays.at(2, "09:00")),
                TestEvent(user: a, name: N.login, at: AnalyticsDays.at(2, "10:00")),
                TestEvent(user: b, name: N.login, at: AnalyticsDays.at(0, "09:00")),  // next exactly 24 h later: returned
                TestEvent(user: b, name: N.login, at: AnalyticsDays.at(1, "09:00")),  // none after: not
            ])
            let returns = try await api.ask("returns-within-24h", from: 0, to: 1, as: admin)
            #expect(returns.columns == ["day", "logins", "returned_within_24h", "share"])
            #expect(returns.rows == [[.text(AnalyticsDays.date(0)), 3, 2, 0.6667], [.text(AnalyticsDays.date(1)), 1, 0, 0]])
            // A return after the range still counts for a login inside it
            #expect(try await api.ask("returns-within-24h", from: 0, to: 0, as: admin).rows == [[.text(AnalyticsDays.date(0)), 3, 2, 0.6667]])
        }
    }

    @Test(arguments: Backend.available)
    func spendingIsAddedUpPerCurrencyAndOfferViewsPerShop(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            let (a, b, c) = (try await api.signUp("a"), try await api.signUp("b"), try await api.signUp("c"))
            func money(_ user: Account, _ kind: String, _ amount: Int64, _ currency: String) -> TestEvent {
                TestEvent(user: user, name: N.transactionRecorded, at: AnalyticsDays.at(3, "12:00"), app: "spendiq",
                          properties: [K.kind: .string(kind), K.amountMinor: .integer(amount), K.currency: .string(currency)])
            }
            func view(_ user: Account, _ offer: String, _ shop: String) -> TestEvent {
                TestEvent(user: user, name: N.offerViewed, at: AnalyticsDays.at(3, "13:00"), app: "spendiq",
                          properties: [K.offerID: .string(offer), K.shop: .string(shop)])
            }
            try await api.record([
                money(a, "expense", 1000, "COP"), money(a, "income", 5000, "COP"), money(b, "expense", 250, "COP"),
                money(b, "expense", 300, "USD"), money(c, "income", 1000, "USD"),
                view(a, "o1", "Éxito"), view(b, "o1", "Éxito"), view(a, "o2", "Éxito"), view(c, "o3", "Juan Valdez"),
            ])
            let money = try await api.ask("spent-vs-received", as: admin)
            #expect(money.columns == ["currency", "spent_minor", "received_minor", "users"])
            #expect(money.rows == [["COP", 1250, 5000, 2], ["USD", 300, 1000, 2]])
            #expect(try await api.ask("offer-views-per-shop", as: admin).rows == [["Éxito", 3, 2, 2], ["Juan Valdez", 1, 1, 1]])
        }
    }

    @Test(arguments: Backend.available)
    func pantryScansAndContributionsAreCounted(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            let (a, b) = (try await api.signUp("a"), try await api.signUp("b"))
            func pantry(_ user: Account, _ name: String, _ day: Int64, _ properties: [String: SyncValue] = [:]) -> TestEvent {
                TestEvent(user: user, name: name, at: AnalyticsDays.at(day, "18:00"), app: "pantry", platform: "linux", properties: properties)
            }
            try await api.record([
                pantry(a, N.productScanned, 0, [K.result: "known"]), pantry(b, N.productScanned, 0, [K.result: "known"]),
                pantry(a, N.productScanned, 0, [K.result: "unknown"]), pantry(a, N.productScanned, 1, [K.result: "offline"]),
                pantry(a, N.productPosted, 0), pantry(b, N.productPosted, 0), pantry(a, N.productVoted, 0, [K.rating: 4]),
                pantry(b, N.productVoted, 1, [K.rating: -2]),
            ])
            #expect(try await api.ask("pantry-scan-results", as: admin).rows == [["known", 2, 2], ["offline", 1, 1], ["unknown", 1, 1]])
            #expect(try await api.ask("pantry-contributions-per-day", as: admin).rows
                == [[.text(AnalyticsDays.date(0)), 2, 1], [.text(AnalyticsDays.date(1)), 0, 1]])
        }
    }

    @Test(arguments: Backend.available)
    func aQuestionWithoutEventsAnswersNoRows(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            for question in AnalyticsQuestion.allCases {
                let answer = try await api.ask(question.rawValue, as: admin)
                #expect(answer.rows.isEmpty, "\(question)")
                #expect(answer.columns == question.answerColumns)
                #expect(answer.from == AnalyticsDays.date(0) && answer.to == AnalyticsDays.date(13))
            }
        }
    }
}
