import EventualAPI
import EventualKit
import Foundation
import GRDB
import Testing
@testable import Spending

/// What SpendiQ's screens record for the product team's questions, on the device (the engine's
/// upload and the server's answers are tested with the analytics suites and SustainU's).
@Suite("SpendiQ's usage events", .timeLimit(.minutes(2)))
struct SpendingAnalyticsTests {
    @Test func theScreensRecordWhatTheQuestionsNeedAndTheOptOutRecordsNothing() async throws {
        try await withLiveServer { server, scratch in
            // Given a verified person signed in, who sets a weekly limit
            let user = try await SpendingUser.verified(on: server, scratch: scratch)
            let spending = try await spendingDevice(scratch.folder("phone"), server: server).login(email: user.email, password: user.password).spending
            try await spending.ledger.addAccount(name: "Cash", currency: "EUR", openingBalance: "100")
            _ = try await spending.limits.set(.weekly, amount: "10", currency: "EUR", category: "food")
            // When they record an expense over it, an income, and open the dashboard
            _ = try await spending.record(.expense, TransactionDetails(amount: "12.50", account: "Cash", category: "food"))
            _ = try await spending.record(.income, TransactionDetails(amount: "40", account: "Cash"))
            _ = try await spending.openDashboard()
            // Then the device holds one event of each, with the amounts the questions add up
            let events = try await spending.store.reader.read { db in
                try Row.fetchAll(db, sql: "SELECT name, properties FROM eventual_events ORDER BY rowid")
                    .map { (name: $0["name"] as String, properties: String(decoding: $0["properties"] as Data, as: UTF8.self)) }
            }
            let names = events.map(\.name)
            // (the sign-in's own events left with its sync, so none of them waits)
            #expect(!names.contains(AnalyticsName.login))
            #expect(names.filter { $0 == AnalyticsName.transactionRecorded }.count == 2)
            #expect(names.filter { $0 == AnalyticsName.limitExceeded }.count == 1)
            #expect(names.filter { $0 == AnalyticsName.dashboardOpened }.count == 1)
            let expense = try #require(events.first { $0.name == AnalyticsName.transactionRecorded })
            #expect(expense.properties.contains("1250") && expense.properties.contains("EUR") && expense.properties.contains("expense"))
            // And nothing names the person
            #expect(!events.contains { $0.properties.contains(user.email) })

            // When a person turns analytics off, nothing more is recorded
            var configuration = spendingDevice(scratch.folder("phone"), server: server).configuration
            configuration.analyticsEnabled = false
            let quiet = try await SpendingApp(configuration: configuration).open()
            let before = try quiet.analytics.counts().waiting
            _ = try await quiet.openDashboard()
            #expect(try quiet.analytics.counts().waiting == before)
        }
    }
}
