import EventualAPI
import Foundation
import Testing
@testable import EventualServer

@Suite("Analytics: filing events and who may read the answers", .timeLimit(.minutes(3)))
struct AnalyticsIngestTests {
    typealias N = AnalyticsName

    @Test(arguments: Backend.available)
    func aBatchSentTwiceIsFiledOnce(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            let user = try await api.signUp()
            let events = (0..<20).map { minute in
                TestEvent(user: user, name: N.mapOpened, at: AnalyticsDays.at(0, "10:\(10 + minute)"), properties: [AnalyticsKey.source: "main"])
            }
            // When the batch is sent, then sent again after a lost answer (with one id twice in it)
            let first = try await api.postEvents(events, as: user).decode(EventBatchResultJSON.self)
            let again = try await api.postEvents(events + [events[0]], as: user).decode(EventBatchResultJSON.self)
            #expect((first.accepted, first.duplicates) == (20, 0))
            #expect((again.accepted, again.duplicates) == (0, 21))
            // Then the questions count 20 events, from the events and from the hours of activity alike
            #expect(try await api.ask("map-entry-sources", as: admin).rows == [["main", 20, 1]])
            #expect(try await api.ask("platform-use-per-week", as: admin).rows == [[.text(AnalyticsDays.date(0)), "ios", 1, 20]])
        }
    }

    @Test(arguments: Backend.available)
    func eventsAreTiedToTheUserWhoSentThem(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            let (a, b) = (try await api.signUp("a"), try await api.signUp("b"))
            // Two users' devices happen to send the same event id: each is its own event
            let id = "0199aaaa-0000-7000-8000-000000000001"
            try await api.record([TestEvent(user: a, name: N.scanStarted, at: AnalyticsDays.at(0, "08:00"), id: id)])
            try await api.record([TestEvent(user: b, name: N.scanStarted, at: AnalyticsDays.at(0, "08:00"), id: id)])
            #expect(try await api.ask("scan-vs-tips", as: admin).rows == [["scan", 2, 2, 1]])
        }
    }

    @Test(arguments: Backend.available)
    func eventsCarryingPersonalDataAreRejectedAndTheRestFiled(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let user = try await api.signUp()
            let at = AnalyticsDays.at(0, "08:00")
            let good = TestEvent(user: user, name: N.login, at: at)
            let bad = [
                TestEvent(user: user, name: N.login, at: at, properties: ["user_email": "someone"]),
                TestEvent(user: user, name: N.login, at: at, properties: ["note": "ana@example.com"]),
                TestEvent(user: user, name: N.pointVisited, at: at, properties: ["latitude": 4.6031234]),
                TestEvent(user: user, name: N.pointVisited, at: at, properties: ["area": "4.6031234,-74.0651"]),
                TestEvent(user: user, name: N.login, at: at, properties: ["code": .string(String(repeating: "aB3", count: 20))]),
                TestEvent(user: user, name: "Login Now", at: at),
                TestEvent(user: user, name: N.login, at: 1_000),
                TestEvent(user: user, name: N.login, at: at, platform: "i OS"),
            ]
            let answer = try await api.postEvents([good] + bad, as: user)
            #expect(answer.status == .ok)
            let result = try answer.decode(EventBatchResultJSON.self)
            #expect(result.accepted == 1)
            #expect(result.rejected.map(\.id) == bad.map(\.id))
            #expect(result.rejected.allSatisfy { !$0.message.isEmpty })
            // A rounded area is fine
            let area = TestEvent(user: user, name: N.pointVisited, at: at, properties: ["area": .string(AnalyticsPrivacy.area(latitude: 4.6031234, longitude: -74.0651))])
            #expect(try await api.postEvents([area], as: user).decode(EventBatchResultJSON.self).accepted == 1)
        }
    }

    @Test(arguments: Backend.available)
    func aPropertyThatIsNotTextNumberOrFlagIsRejected(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let user = try await api.signUp()
            let json = #"{"events":[{"id":"e1","name":"login","app":"sustainu","appVersion":"1","platform":"ios","sessionId":"s","at":\#(AnalyticsDays.at(0, "08:00")),"properties":{"nested":{"a":1}}}]}"#
            let result = try await api.send(.post, "/v1/events", headers: user.bearer, json: json).decode(EventBatchResultJSON.self)
            #expect(result.accepted == 0)
            #expect(result.rejected.map(\.id) == ["e1"])
        }
    }

    @Test(arguments: Backend.available)
    func batchesOverFiveHundredAndStrangersAreRefused(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let user = try await api.signUp()
            let events = (0..<501).map { _ in TestEvent(user: user, name: N.login, at: AnalyticsDays.at(0, "08:00")) }
            let tooMany = try await api.postEvents(events, as: user)
            #expect(tooMany.status == .badRequest)
            _ = try tooMany.error()
            let stranger = try await api.send(.post, "/v1/events", json: #"{"events":[]}"#)
            #expect(stranger.status == .unauthorized)
        }
    }

    @Test(arguments: Backend.available)
    func eventsPastTheDaysLimitAre429AndNothingOfTheBatchIsFiled(_ backend: Backend) async throws {
        try await withServer(backend, configure: { $0.quotas.eventsPerUserPerDay = 30 }) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            let user = try await api.signUp()
            func batch(_ count: Int) -> [TestEvent] {
                (0..<count).map { _ in TestEvent(user: user, name: N.scanStarted, at: AnalyticsDays.at(0, "08:00")) }
            }
            // Given 20 events filed today
            try await api.record(batch(20))
            // When a batch of 20 more would pass the limit of 30
            let refused = try await api.postEvents(batch(20), as: user)
            // Then it is 429 with a Retry-After within a day, and none of it is filed
            #expect(refused.status == .tooManyRequests, "\(refused.text)")
            let retryAfter = try #require(refused.headers[.retryAfter].flatMap(Int.init))
            #expect(retryAfter > 0 && retryAfter <= 24 * 3600)
            #expect(try refused.error().message.contains("30 a day"))
            #expect(try await api.ask("platform-use-per-week", as: admin).rows == [[.text(AnalyticsDays.date(0)), "ios", 1, 20]])
            // And a batch that fits is filed, after which even one more is refused
            try await api.record(batch(10))
            #expect(try await api.postEvents(batch(1), as: user).status == .tooManyRequests)
            // And another person files as before
            let other = try await api.signUp("other")
            try await api.record([TestEvent(user: other, name: N.scanStarted, at: AnalyticsDays.at(0, "09:00"))])
        }
    }

    @Test(arguments: Backend.available)
    func eventsCountInTheByteQuota(_ backend: Backend) async throws {
        try await withServer(backend, configure: { $0.quotas.bytesPerUser = 8 * 1024 }) { api, location in
            let user = try await api.signUp()
            func batch(_ count: Int) -> [TestEvent] {
                (0..<count).map { _ in TestEvent(user: user, name: N.scanStarted, at: AnalyticsDays.at(0, "08:00")) }
            }
            // Given events that fill about half the quota
            try await api.record(batch(40))
            let stored = try await RecyclingData.withDatabase(location) { database in
                try await database.withConnection { sql in
                    try await sql.select().column("bytes").from("storage_usage").where("user_id", .equal, user.id).first()?
                        .decode(column: "bytes", as: Int64.self)
                }
            }
            #expect((stored ?? 0) > 40 * 80)
            // When a batch would pass it, then it is 413 saying so, and nothing of it is filed
            let refused = try await api.postEvents(batch(60), as: user)
            #expect(refused.status == .contentTooLarge, "\(refused.text)")
            #expect(try refused.error().message.contains("Quota"))
            let after = try await RecyclingData.withDatabase(location) { database in
                try await database.withConnection { sql in
                    try await sql.select().column("bytes").from("storage_usage").where("user_id", .equal, user.id).first()?
                        .decode(column: "bytes", as: Int64.self)
                }
            }
            #expect(after == stored)
        }
    }

    @Test(arguments: Backend.available)
    func onlyAdminsReadTheAnswers(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let user = try await api.signUp()
            let admin = try await api.signUpAdmin(at: location)
            let asUser = try await api.send(.get, "/v1/analytics/scan-time", headers: user.bearer)
            #expect(asUser.status == .forbidden)
            _ = try asUser.error()
            #expect(try await api.send(.get, "/v1/analytics/scan-time").status == .unauthorized)
            #expect(try await api.send(.get, "/v1/analytics/scan-time", headers: admin.bearer).status == .ok)
        }
    }

    @Test(arguments: Backend.available)
    func badRangesAndUnknownQuestionsAreA400(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let admin = try await api.signUpAdmin(at: location)
            for query in ["from=2026-02-31", "from=2026-03-10&to=2026-03-01", "from=2020-01-01&to=2026-01-01", "to=20260301",
                          "from=2026-03-01%00"] {
                let answer = try await api.send(.get, "/v1/analytics/scan-time?\(query)", headers: admin.bearer)
                #expect(answer.status == .badRequest, "\(query): \(answer.text)")
                _ = try answer.error()
            }
            let unknown = try await api.send(.get, "/v1/analytics/meaning-of-life", headers: admin.bearer)
            #expect(unknown.status.code >= 400 && unknown.status.code < 500)
            _ = try unknown.error()
        }
    }

    @Test func theContractListsEveryQuestion() throws {
        let contract = String(decoding: try Contract.document(), as: UTF8.self)
        for question in AnalyticsQuestion.allCases {
            #expect(contract.contains(question.rawValue), "\(question.rawValue) is missing from openapi.yaml")
        }
        #expect(Set(Operations.AnalyticsQuestion.Input.Path.QuestionPayload.allCases.map(\.rawValue))
            == Set(AnalyticsQuestion.allCases.map(\.rawValue)))
    }
}
