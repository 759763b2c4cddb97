import EventualAPI
import EventualKit
@testable import EventualServer
import Foundation
import SQLKit
import Testing
@testable import Spending

@Suite("SpendiQ offline end to end, against a real server", .timeLimit(.minutes(5)))
struct OfflineEndToEndTests {
    @Test func fiftyOfflineWritesAndATwoDeviceEditArriveOnceWithEqualTotalsEverywhere() async throws {
        try await withLiveServer { server, scratch in
            // Given a phone and a tablet of one person, sharing an account and one expense
            let user = try await SpendingUser.verified(on: server, scratch: scratch)
            let phoneFolder = scratch.folder("phone")
            let phone = try await spendingDevice(phoneFolder, server: server).login(email: user.email, password: user.password).spending
            _ = try await phone.ledger.addAccount(name: "Cash", currency: "EUR", openingBalance: "100")
            let shared = try await phone.ledger.record(.expense, TransactionDetails(amount: "10.00", account: "Cash", category: "food")).transaction
            #expect(await phone.device.sync().failure == nil)
            let tablet = try await spendingDevice(scratch.folder("tablet"), server: server)
                .login(email: user.email, password: user.password).spending
            #expect(try tablet.ledger.transactions().count == 1)

            // When the phone, offline, records 50 transactions and edits the shared one
            let offline = try await spendingDevice(phoneFolder, server: unreachableServer).open()
            for index in 1...50 {
                _ = try await offline.ledger.record(.expense, TransactionDetails(amount: "\(index).25", account: "Cash",
                                                                                 category: index % 2 == 0 ? "food" : "transport"))
            }
            _ = try await offline.ledger.edit(shared.id, TransactionDetails(amount: "11.00", note: "phone"))
            #expect(await offline.device.sync(.localBudget, pull: false).sent == 0)
            // and the tablet, online, edits the same transaction later
            try await Task.sleep(for: .milliseconds(5))
            _ = try await tablet.ledger.edit(shared.id, TransactionDetails(amount: "12.00", category: "leisure"))
            #expect(await tablet.device.sync().failure == nil)

            // Then once the phone is back online and both sync
            let back = try await spendingDevice(phoneFolder, server: server).open()
            let report = await back.device.sync()
            #expect(report.failure == nil)
            #expect(report.rejected == 0)
            #expect(await tablet.device.sync().failure == nil)
            #expect(try back.outbox.counts().pending == 0)

            // nothing is lost or doubled: 51 transactions, the shared one merged field by field
            // (the tablet's later amount and category, the phone's note)
            var spentMinor: Int64 = 1200
            for index in 1...50 { spentMinor += Int64(index * 100 + 25) }
            let third = try await spendingDevice(scratch.folder("laptop"), server: server)
                .login(email: user.email, password: user.password).spending
            for device in [back, tablet, third] {
                let transactions = try device.ledger.transactions()
                #expect(transactions.count == 51)
                #expect(Set(transactions.map(\.id)).count == 51)
                let merged = try device.ledger.transaction(shared.id)
                #expect(merged.amountMinor == 1200)
                #expect(merged.category == "leisure")
                #expect(merged.note == "phone")
                let dashboard = try device.dashboard()
                #expect(dashboard.last30Days == [Dashboard.Totals(currency: "EUR", spentMinor: spentMinor, receivedMinor: 0)])
                #expect(dashboard.accounts.map(\.balanceMinor) == [10_000 - spentMinor])
            }
            // and the server holds exactly those 51 records
            let database = try await serverDatabase(scratch)
            let rows = try await database.withConnection { sql in
                try await sql.raw("SELECT COUNT(*) AS n FROM sync_records WHERE collection = 'spending_transactions'").first()?
                    .decode(column: "n", as: Int.self)
            }
            await database.close()
            #expect(rows == 51)
        }
    }
}
