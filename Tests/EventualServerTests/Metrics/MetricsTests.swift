import Foundation
import Testing
@testable import EventualServer

@Suite("GET /metrics", .timeLimit(.minutes(2)))
struct MetricsTests {
    @Test func metricsAreOffWithoutAToken() async throws {
        try await withServer(.sqlite) { api in
            let answer = try await api.send(.get, "/metrics")
            #expect(answer.status == .notFound)
        }
    }

    @Test func metricsNeedTheTokenAndCountRequestsPerRouteAndStatus() async throws {
        try await withServer(.sqlite, configure: { $0.metricsToken = "scrape-me" }) { api in
            let account = try await api.signUp()
            _ = try await api.lookup(Barcodes.unique(), as: account)
            _ = try await api.login(email: account.email, password: "wrong password")
            _ = try await api.pushed([SyncChangeJSON(recordId: "m", hlc: Stamps.at(-1000), fields: pantryItem())], as: account)
            #expect(try await api.send(.get, "/metrics").status == .unauthorized)
            #expect(try await api.send(.get, "/metrics", headers: [.authorization: "Bearer wrong"]).status == .unauthorized)
            let answer = try await api.send(.get, "/metrics", headers: [.authorization: "Bearer scrape-me"])
            #expect(answer.status == .ok)
            let text = answer.text
            #expect(text.contains(#"http_requests_total{"#))
            #expect(text.contains(#"route="/products""#))
            #expect(text.contains(#"status="401""#))
            #expect(text.contains("http_request_duration_seconds_bucket"))
            #expect(text.contains("database_connection_wait_seconds"))
            #expect(text.contains(#"sync_pushed_changes_total{outcome="applied"} 1"#))
            #expect(text.contains("login_failures_total 1"))
            #expect(!text.contains("scrape-me"))
        }
    }
}
