import EventualAPI
import Foundation
import HTTPTypes
import Testing
@testable import EventualServer

/// A week of events touching every question, for the dashboard's tests (day 0 is 2026-03-02).
func dashboardEvents(_ a: Account, _ b: Account) -> [TestEvent] {
    typealias N = AnalyticsName
    typealias K = AnalyticsKey
    let reminder: [String: SyncValue] = [K.kind: "daily_reminder"]
    var events: [TestEvent] = []
    for day in Int64(0)..<7 {
        for (user, platform) in [(a, "ios"), (b, "android")] {
            events += [
                TestEvent(user: user, name: N.login, at: AnalyticsDays.at(day, "08:00"), platform: platform),
                TestEvent(user: user, name: N.notificationShown, at: AnalyticsDays.at(day, "10:00"), platform: platform, properties: reminder),
                TestEvent(user: user, name: N.mapOpened, at: AnalyticsDays.at(day, "10:10"), platform: platform,
                          properties: [K.source: day % 3 == 0 ? "main" : "navbar"]),
                TestEvent(user: user, name: N.pointVisited, at: AnalyticsDays.at(day, "10:20"), platform: platform,
                          properties: [K.pointID: .string("ML-\(day % 2 + 1)")]),
                TestEvent(user: user, name: N.scanStarted, at: AnalyticsDays.at(day, "11:00"), platform: platform),
                TestEvent(user: user, name: N.scanAnswered, at: AnalyticsDays.at(day, "11:01"), platform: platform,
                          properties: [K.trashType: day % 2 == 0 ? "plastic" : "glass", K.durationMs: .integer(800 + day * 100)]),
                TestEvent(user: user, name: N.tipOpened, at: AnalyticsDays.at(day, "12:00"), platform: platform, properties: [K.trashType: "paper"]),
                TestEvent(user: user, name: N.tipClosed, at: AnalyticsDays.at(day, "12:01"), platform: platform,
                          properties: [K.trashType: "paper", K.seconds: .number(Double(20 + day))]),
                TestEvent(user: user, name: N.transactionRecorded, at: AnalyticsDays.at(day, "13:00"), app: "spendiq", platform: platform,
                          properties: [K.kind: day % 2 == 0 ? "expense" : "income", K.amountMinor: .integer(1000 * (day + 1)), K.currency: "COP"]),
                TestEvent(user: user, name: N.offerViewed, at: AnalyticsDays.at(day, "13:10"), app: "spendiq", platform: platform,
                          properties: [K.offerID: .string("o\(day)"), K.shop: day % 2 == 0 ? "Éxito" : "Carulla"]),
                TestEvent(user: user, name: N.productScanned, at: AnalyticsDays.at(day, "18:00"), app: "pantry", platform: "linux",
                          properties: [K.result: day % 3 == 0 ? "unknown" : "known"]),
                TestEvent(user: user, name: N.productPosted, at: AnalyticsDays.at(day, "18:01"), app: "pantry", platform: "linux"),
                TestEvent(user: user, name: N.productVoted, at: AnalyticsDays.at(day, "18:02"), app: "pantry", platform: "linux",
                          properties: [K.rating: 1]),
            ]
        }
    }
    return events
}

@Suite("Dashboard over HTTP", .timeLimit(.minutes(2)))
struct DashboardHTTPTests {
    static let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    func signIn(_ api: API, _ account: Account, headers: HTTPFields = [:]) async throws -> Answer {
        var headers = headers
        headers[.contentType] = "application/x-www-form-urlencoded"
        let body = "email=\(account.email.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&password=\(account.password)"
        return try await api.client.execute(uri: "/dashboard/sign-in", method: .post, headers: headers, body: .init(string: body)) {
            Answer(status: $0.status, headers: $0.headers, body: $0.body)
        }
    }

    @Test func aReversedOrImpossibleRangeShowsTheFormWithWhatIsWrong() async throws {
        try await withServer(.sqlite) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            let session = String(try #require(try await signIn(api, admin).headers[.setCookie]).split(separator: ";")[0])
            for (query, problem) in [("from=2026-03-10&to=2026-03-01", "From (2026-03-10) must not be after to (2026-03-01)."),
                                     ("from=2026-02-31", "From must be a date YYYY-MM-DD"),
                                     ("from=%3Cb%3E&to=2026-03-01", "From must be a date YYYY-MM-DD")] {
                let page = try await api.send(.get, "/dashboard/spendiq?\(query)", headers: [.cookie: session])
                // Then the page is HTML, not the API's JSON, with the form and the problem in words
                #expect(page.status == .badRequest)
                #expect(page.headers[.contentType]?.hasPrefix("text/html") == true, "\(query): \(page.text.prefix(200))")
                #expect(page.text.contains("<form class=\"range\""))
                #expect(page.text.contains("role=\"alert\">\(problem)"), "\(query): \(page.text)")
                #expect(!page.text.contains("\"statusCode\"") && !page.text.contains("<b>"))
            }
        }
    }

    @Test func anAdminGetsAStrictHttpOnlySessionCookieAndTheCharts() async throws {
        try await withServer(.sqlite) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            let signedIn = try await signIn(api, admin)
            #expect(signedIn.status == .seeOther)
            let cookie = try #require(signedIn.headers[.setCookie])
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/dashboard"))
            #expect(!cookie.contains("Secure"))
            let session = String(cookie.split(separator: ";")[0])
            let page = try await api.send(.get, "/dashboard/sustainu?from=2026-03-02&to=2026-03-08", headers: [.cookie: session])
            #expect(page.status == .ok)
            #expect(page.headers[.contentType]?.hasPrefix("text/html") == true)
            for question in AnalyticsQuestion.of(.sustainU) { #expect(page.text.contains("id=\"\(question.rawValue)\"")) }
            #expect(!page.text.contains("<script"))
            // Behind a TLS proxy the cookie is Secure
            let behindTLS = try await signIn(api, admin, headers: [HTTPField.Name("X-Forwarded-Proto")!: "https"])
            #expect(behindTLS.headers[.setCookie]?.contains("; Secure") == true)
            // Signing out revokes the session
            _ = try await api.send(.post, "/dashboard/sign-out", headers: [.cookie: session])
            #expect(try await api.send(.get, "/dashboard/sustainu", headers: [.cookie: session]).status == .seeOther)
        }
    }

    @Test func aNonAdminIsRefusedAndGetsNoSession() async throws {
        try await withServer(.sqlite) { api in
            let user = try await api.signUp()
            let answer = try await signIn(api, user)
            #expect(answer.status == .forbidden)
            #expect(answer.headers[.setCookie] == nil)
            #expect(answer.text.contains("Not for this account"))
            // Nor does their API token open a page
            let page = try await api.send(.get, "/dashboard/sustainu", headers: [.cookie: "eventual_dashboard=\(user.accessToken)"])
            #expect(page.status == .forbidden)
            let csv = try await api.send(.get, "/dashboard/spendiq/offer-views-per-shop.csv", headers: [.cookie: "eventual_dashboard=\(user.accessToken)"])
            #expect(csv.status == .forbidden)
        }
    }

    @Test func aWrongPasswordShowsTheFormAgain() async throws {
        try await withServer(.sqlite) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            let wrong = Account(id: admin.id, username: admin.username, email: admin.email, password: "not-it-at-all", accessToken: "")
            let answer = try await signIn(api, wrong)
            #expect(answer.status == .unauthorized)
            #expect(answer.text.contains("Wrong email or password"))
            #expect(answer.headers[.setCookie] == nil)
            #expect(try await api.send(.get, "/dashboard/pantry").status == .seeOther)
        }
    }

    @Test func eachChartDownloadsAsCSV() async throws {
        try await withServer(.sqlite) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            let other = try await api.signUp("b")
            try await api.record(dashboardEvents(admin, other))
            let cookie = String(try #require(try await signIn(api, admin).headers[.setCookie]).split(separator: ";")[0])
            let csv = try await api.send(.get, "/dashboard/spendiq/offer-views-per-shop.csv?from=2026-03-02&to=2026-03-08", headers: [.cookie: cookie])
            #expect(csv.status == .ok)
            #expect(csv.headers[.contentType]?.hasPrefix("text/csv") == true)
            // Éxito on days 0, 2, 4, 6 by both users (8 views of 4 offers); Carulla on days 1, 3, 5 (6 views of 3)
            #expect(csv.text == "shop,views,viewers,offers\r\nÉxito,8,2,4\r\nCarulla,6,2,3\r\n")
            let wrongPage = try await api.send(.get, "/dashboard/pantry/offer-views-per-shop.csv", headers: [.cookie: cookie])
            #expect(wrongPage.status == .notFound)
        }
    }
}

@Suite("Dashboard in headless Chromium", .serialized, .timeLimit(.minutes(4)), .tags(.browser))
struct DashboardBrowserTests {
    /// Where the screenshots go: `DASHBOARD_ARTIFACTS`, or .build/test-artifacts/dashboard.
    static var artifacts: URL {
        if let folder = ProcessInfo.processInfo.environment["DASHBOARD_ARTIFACTS"], !folder.isEmpty { return URL(fileURLWithPath: folder) }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/test-artifacts/dashboard")
    }

    struct Section: Decodable {
        let id: String
        let bars: Int
        let rows: [[String]]
        let hasChart: Bool
    }

    @Test func anAdminSignsInAndSeesEveryChartWithItsDataAndANonAdminIsRefused() async throws {
        try await withServer(.sqlite, mode: .live) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            let other = try await api.signUp("b")
            try await api.record(dashboardEvents(admin, other))
            let port = try #require(api.client.port)
            let base = "http://127.0.0.1:\(port)"
            // What each chart must show: the API's answer for the same range
            var expected: [String: [[String]]] = [:]
            for question in AnalyticsQuestion.allCases {
                let answer = try await api.ask(question.rawValue, from: 0, to: 6, as: admin)
                expected[question.rawValue] = answer.rows.map { $0.map(Self.text) }
            }
            let folder = Self.artifacts
            let (adminEmail, adminPassword, otherEmail, otherPassword) = (admin.email, admin.password, other.email, other.password)
            let pages = try await offCooperativePool { () throws -> [String: [Section]] in
                let browser = try HeadlessChromium()
                defer { browser.quit() }
                try browser.open("\(base)/dashboard")
                try browser.navigate(by: Self.fill(adminEmail, adminPassword))
                var pages: [String: [Section]] = [:]
                for app in AnalyticsApp.allCases {
                    try browser.open("\(base)/dashboard/\(app.rawValue)?from=2026-03-02&to=2026-03-08")
                    let json = try browser.evaluate(Self.collect) as? String ?? "[]"
                    pages[app.rawValue] = try JSONDecoder().decode([Section].self, from: Data(json.utf8))
                    try browser.screenshot(to: folder.appendingPathComponent("\(app.rawValue).png"))
                }
                // A non-admin: signed out, then in as someone else
                try browser.navigate(by: "document.querySelector('header form').submit()")
                try browser.navigate(by: Self.fill(otherEmail, otherPassword))
                let refused = try browser.evaluate("[!!document.getElementById('refused'), document.querySelectorAll('section.question').length]") as? [Any]
                pages["refused"] = (refused?.first as? Bool == true && refused?.last as? Int == 0) ? [] : nil
                try browser.screenshot(to: folder.appendingPathComponent("refused.png"))
                try browser.open("\(base)/dashboard/sustainu")
                let signInAgain = try browser.evaluate("!!document.querySelector('form.signin') && !document.querySelector('section.question')") as? Bool
                pages["after-refusal"] = signInAgain == true ? [] : nil
                return pages
            }
            for app in AnalyticsApp.allCases {
                let sections = try #require(pages[app.rawValue], "no page for \(app)")
                #expect(sections.map(\.id) == AnalyticsQuestion.of(app).map(\.rawValue), "\(app): charts \(sections.map(\.id))")
                for section in sections {
                    let rows = try #require(expected[section.id])
                    #expect(!rows.isEmpty, "\(section.id) has no data in the hand-made week")
                    #expect(section.hasChart && section.bars > 0, "\(section.id): no bars")
                    #expect(section.rows == rows, "\(section.id): the table shows \(section.rows), the API answers \(rows)")
                }
            }
            #expect(pages["refused"] != nil, "a non-admin was not refused")
            #expect(pages["after-refusal"] != nil, "a non-admin got a session")
            print("dashboard screenshots: \(folder.path)")
        }
    }

    static func text(_ cell: Cell) -> String {
        switch cell {
        case .text(let text): return text
        case .number(let number): return AnalyticsCell.number(number).description
        case .null: return ""
        }
    }

    static func fill(_ email: String, _ password: String) -> String {
        """
        document.querySelector('input[name=email]').value = \(jsonString(email));
        document.querySelector('input[name=password]').value = \(jsonString(password));
        document.querySelector('form.signin').submit();
        """
    }

    static let collect = """
        JSON.stringify([...document.querySelectorAll('section.question')].map(s => ({
            id: s.id,
            hasChart: !!s.querySelector('svg.chart'),
            bars: s.querySelectorAll('svg.chart g.bar').length,
            rows: [...s.querySelectorAll('tbody tr')].map(tr => [...tr.children].map(td => td.textContent))
        })))
        """
}
