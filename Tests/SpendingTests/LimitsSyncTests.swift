import EventualAPI
import EventualKit
import Foundation
import GRDB
import Testing
@testable import Spending

@Suite("Budgets sync like accounts", .timeLimit(.minutes(4)))
struct LimitsSyncTests {
    @Test func aBudgetReachesTheOtherDeviceAndSurvivesAnotherPersonsSignIn() async throws {
        try await withLiveServer { server, scratch in
            // Given a person who sets two budgets on their phone
            let alice = try await SpendingUser.verified(on: server, scratch: scratch, name: "alice")
            let bob = try await SpendingUser.verified(on: server, scratch: scratch, name: "bob")
            let phoneFolder = scratch.folder("phone")
            let phone = try await spendingDevice(phoneFolder, server: server).login(email: alice.email, password: alice.password).spending
            try await phone.limits.set(.weekly, amount: "120", currency: "EUR", category: "food")
            try await phone.limits.set(.monthly, amount: "900", currency: "EUR")
            try await phone.limits.set(.monthly, amount: "1000", currency: "EUR")
            #expect(await phone.device.sync().failure == nil)
            // When she signs in on her laptop
            let laptop = try await spendingDevice(scratch.folder("laptop"), server: server).login(email: alice.email, password: alice.password).spending
            // Then the laptop checks the same budgets
            let expected = [SpendingLimit(period: .monthly, category: "", currency: "EUR", amountMinor: 100_000),
                            SpendingLimit(period: .weekly, category: "food", currency: "EUR", amountMinor: 12_000)]
            #expect(try laptop.limits.all() == expected)
            _ = try await laptop.ledger.addAccount(name: "Cash", currency: "EUR")
            let over = try await laptop.ledger.record(.expense, TransactionDetails(amount: "130", account: "Cash", category: "food"))
            #expect(over.warnings.map(\.limit) == [expected[1]])
            // and a budget removed there is removed on the phone
            #expect(try await laptop.limits.remove(.weekly, currency: "EUR", category: "food"))
            #expect(await laptop.device.sync().failure == nil)
            #expect(await phone.device.sync().failure == nil)
            #expect(try phone.limits.all() == [expected[0]])
            // When another person signs in on the phone, then she signs in there again
            _ = try await spendingDevice(phoneFolder, server: server).login(email: bob.email, password: bob.password)
            let bobs = try await spendingDevice(phoneFolder, server: server).open()
            #expect(try bobs.limits.all().isEmpty)
            let back = try await spendingDevice(phoneFolder, server: server).login(email: alice.email, password: alice.password).spending
            // Then her budget is back
            #expect(try back.limits.all() == [expected[0]])
        }
    }

    @Test func budgetsKeptOnTheDeviceBeforeSyncAreQueuedOnce() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        // Given a database of the previous version holding a device-only budget
        let path = scratch.url.appendingPathComponent("spending.sqlite").path
        let old = try LocalStore(path: path, migrations: Array(SpendingSchema.migrations.prefix(1)))
        try await old.write { tx in
            try tx.db.execute(sql: "INSERT INTO spending_limits (period, category, currency, amountMinor) VALUES ('weekly', 'food', 'EUR', 12000)")
        }
        // When this version opens it
        var configuration = SpendingConfiguration(dataDirectory: scratch.url, serverURL: unreachableServer)
        configuration.timeZone = TimeZone(identifier: "UTC")!
        let store = try LocalStore(path: path, migrations: SpendingSchema.migrations)
        let limits = Limits(store: store, configuration: configuration)
        try await limits.adoptDeviceLimits()
        try await limits.adoptDeviceLimits()
        // Then the budget is kept and queued for the person's other devices, once
        #expect(try limits.all() == [SpendingLimit(period: .weekly, category: "food", currency: "EUR", amountMinor: 12_000)])
        let queued = try Outbox(store: store).entries().filter { $0.operation == SyncCollections.spendingLimits.name }
        #expect(queued.count == 1)
    }
}
