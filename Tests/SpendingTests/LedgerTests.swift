import EventualAPI
import EventualKit
import Foundation
import GRDB
import Testing
@testable import Spending

/// A ledger on a database of its own, with no server: the device's part alone.
func scratchLedger(_ scratch: ScratchFolder, clock: TestClock) throws -> Ledger {
    var configuration = SpendingConfiguration(dataDirectory: scratch.url, serverURL: unreachableServer)
    configuration.clock = clock.function
    configuration.timeZone = TimeZone(identifier: "UTC")!
    let store = try LocalStore(path: scratch.url.appendingPathComponent("spending.sqlite").path, migrations: SpendingSchema.migrations)
    return Ledger(store: store, configuration: configuration)
}

@Suite("Money, the ledger, limits, the dashboard and CSV, on the device")
struct LedgerTests {
    @Test func amountsParseToMinorUnitsWithTheCurrencysDigits() throws {
        #expect(try AmountText.parse("12.50", currency: "EUR") == 1250)
        #expect(try AmountText.parse("12,5", currency: "EUR") == 1250)
        #expect(try AmountText.parse("1.234,56", currency: "EUR") == 123_456)
        #expect(try AmountText.parse("1,234.56", currency: "USD") == 123_456)
        #expect(try AmountText.parse("COP 12.500,00", currency: "COP") == 1_250_000)
        #expect(try AmountText.parse("1200", currency: "JPY") == 1200)
        #expect(try AmountText.parse("1.250", currency: "BHD") == 1250)
        #expect(try AmountText.parseSigned("-42.10", currency: "EUR") == -4210)
        // Three digits after a lone separator read two ways in a currency of two decimals: refused (AmountTextTests)
        #expect(throws: SpendingError.ambiguousAmount("12.505", currency: "EUR", digits: 2, readings: ["12.51", "12505"])) {
            try AmountText.parse("12.505", currency: "EUR")
        }
        for bad in ["0", "-3", "abc", "12.345.6,7,8", "1e308", "99999999999999999999", "", "12.5055", "1,23,456"] {
            #expect(throws: SpendingError.self) { try AmountText.parse(bad, currency: "EUR") }
        }
        #expect(Money(minorUnits: 1250, currency: "EUR").description == "EUR 12.50")
        #expect(Money(minorUnits: -5, currency: "EUR").description == "EUR -0.05")
        #expect(Money(minorUnits: 1200, currency: "JPY").description == "JPY 1200")
        #expect(Money(minorUnits: 1250, currency: "BHD").description == "BHD 1.250")
    }

    @Test func balancesAreComputedFromTheOpeningBalanceAndEveryTransaction() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let ledger = try scratchLedger(scratch, clock: TestClock())
        try await ledger.addAccount(name: "Cash", currency: "EUR", openingBalance: "100")
        try await ledger.addAccount(name: "Bank", kind: .bank, currency: "eur")
        try await ledger.addAccount(name: "Dollars", currency: "USD")
        try await ledger.record(.expense, TransactionDetails(amount: "12.50", account: "cash", category: "Food"))
        try await ledger.record(.income, TransactionDetails(amount: "1500", account: "Bank"))
        let transfer = try await ledger.transfer("50", from: "Bank", to: "Cash")
        let balances = Dictionary(uniqueKeysWithValues: try ledger.balances().map { ($0.account.name, $0.balanceMinor) })
        #expect(balances == ["Cash": 13_750, "Bank": 145_000, "Dollars": 0])
        #expect(try ledger.transactions().first { $0.kind == .expense }?.category == "food")
        await #expect(throws: SpendingError.transferCurrencies(from: "EUR", to: "USD")) { try await ledger.transfer("1", from: "Cash", to: "Dollars") }
        await #expect(throws: SpendingError.accountExists("cash")) { try await ledger.addAccount(name: "cash", currency: "EUR") }
        // Deleting the transfer puts the money back
        try await ledger.delete(String(transfer.id.suffix(8)))
        #expect(try ledger.balances().first { $0.account.name == "Cash" }?.balanceMinor == 8750)
    }

    @Test func aWriteThatGoesOverABudgetSaysSo() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        // Wednesday 2027-01-13 12:00 UTC: the week began on Monday the 11th
        let clock = TestClock(1_799_841_600_000)
        let ledger = try scratchLedger(scratch, clock: clock)
        try await ledger.addAccount(name: "Cash", currency: "EUR")
        try await ledger.limits.set(.weekly, amount: "120", currency: "EUR", category: "food")
        // Last Sunday's food does not count this week
        #expect(try await ledger.record(.expense, TransactionDetails(amount: "500", account: "Cash", category: "food", date: "2027-01-10")).warnings.isEmpty)
        #expect(try await ledger.record(.expense, TransactionDetails(amount: "100", account: "Cash", category: "food")).warnings.isEmpty)
        #expect(try await ledger.record(.expense, TransactionDetails(amount: "20", account: "Cash", category: "leisure")).warnings.isEmpty)
        let over = try await ledger.record(.expense, TransactionDetails(amount: "32.40", account: "Cash", category: "food"))
        #expect(over.warnings.map(\.description) == ["Over your weekly food limit: EUR 132.40 of 120.00"])
    }

    @Test func theDashboardShowsThirtyDaysEveryBalanceCategoriesAndSevenDays() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let clock = TestClock(1_799_841_600_000)   // 2027-01-13 12:00 UTC
        let ledger = try scratchLedger(scratch, clock: clock)
        try await ledger.addAccount(name: "Cash", currency: "EUR", openingBalance: "10")
        try await ledger.record(.expense, TransactionDetails(amount: "3", account: "Cash", category: "food", date: "2027-01-13T08:00"))
        try await ledger.record(.expense, TransactionDetails(amount: "4", account: "Cash", category: "transport", date: "2027-01-08T08:00"))
        try await ledger.record(.expense, TransactionDetails(amount: "50", account: "Cash", category: "food", date: "2026-12-01"))
        try await ledger.record(.income, TransactionDetails(amount: "20", account: "Cash", date: "2027-01-02"))
        let dashboard = try Dashboard.compute(ledger: ledger)
        #expect(dashboard.last30Days == [Dashboard.Totals(currency: "EUR", spentMinor: 700, receivedMinor: 2000)])
        let balance: Int64 = 1000 - 300 - 400 - 5000 + 2000
        #expect(dashboard.accounts.map(\.balanceMinor) == [balance])
        #expect(dashboard.categories.map(\.category) == ["transport", "food"])
        #expect(dashboard.last7Days.map(\.day) == ["2027-01-07", "2027-01-08", "2027-01-09", "2027-01-10", "2027-01-11", "2027-01-12", "2027-01-13"])
        #expect(dashboard.last7Days.map(\.spentMinor) == [0, 400, 0, 0, 0, 0, 300])
    }

    @Test func aBanksCSVImportsWithMappedColumnsAndAReimportAddsNothing() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let ledger = try scratchLedger(scratch, clock: TestClock())
        try await ledger.addAccount(name: "Bank", kind: .bank, currency: "EUR")
        let file = scratch.url.appendingPathComponent("bank.csv")
        try """
            Fecha;Concepto;Importe
            15/01/2026;"MERCADONA; VALENCIA";-42,10
            15/01/2026;"MERCADONA; VALENCIA";-42,10
            16/01/2026;Nómina;1.850,00
            not a date;broken;-1
            """.write(to: file, atomically: true, encoding: .utf8)
        let csv = CSVExchange(ledger: ledger)
        let map = ["date": "Fecha", "amount": "Importe", "description": "Concepto"]
        let first = try await csv.importCSV(from: file, account: "Bank", map: map)
        #expect(first.imported == 3 && first.alreadyImported == 0 && first.skippedCount == 1)
        let again = try await csv.importCSV(from: file, account: "Bank", map: map)
        #expect(again.imported == 0 && again.alreadyImported == 3)
        let transactions = try ledger.transactions()
        #expect(transactions.count == 3 && transactions.allSatisfy(\.automatic))
        // The file's own spelling of a Spanish bank's header is known without --map
        #expect(try await csv.importCSV(from: file, account: "Bank").alreadyImported == 3)
        #expect(transactions.filter { $0.kind == .expense }.map(\.amountMinor) == [4210, 4210])
        #expect(transactions.first { $0.kind == .income }?.note == "Nómina")
        // Without --map, a header the importer does not know is named in the error
        let strange = scratch.url.appendingPathComponent("strange.csv")
        try "When;What;How much\n2026-01-15;x;-1\n".write(to: strange, atomically: true, encoding: .utf8)
        await #expect(throws: SpendingError.self) { try await csv.importCSV(from: strange, account: "Bank") }
        #expect(try await csv.importCSV(from: strange, account: "Bank", map: ["date": "When", "amount": "How much"]).imported == 1)
        // And the export holds every row
        let out = scratch.url.appendingPathComponent("out.csv")
        #expect(try csv.export(to: out.path) == 4)
        let lines = try String(contentsOf: out, encoding: .utf8).split(separator: "\n")
        #expect(lines.first == "id,date,account,kind,amount,currency,category,note,place,automatic,to_account,latitude,longitude")
        #expect(lines.count == 5)
    }
}

@Suite("LocationTracker with a clock a test drives")
struct LocationTrackerTests {
    @Test func positionsAreKeptOnceAMinuteAndPushedOnceEveryFiveMinutesAsOneEntry() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let clock = TestClock(1_800_000_000_000)
        let store = try LocalStore(path: scratch.url.appendingPathComponent("spending.sqlite").path, migrations: SpendingSchema.migrations)
        let tracker = LocationTracker(store: store, clock: clock.function)
        let start = clock.now
        var saves: [Int64] = [], pushes: [Int64] = []
        // Given a phone offline for 30 minutes whose sensor reports every 10 seconds, moving north
        for step in 0..<180 {
            let position = GeoPosition(latitude: 43.7 + Double(step) * 0.0001, longitude: 7.42)
            let update = try await tracker.observe(position)
            if update.saved { saves.append((clock.now - start) / 1000) }
            if update.queued { pushes.append((clock.now - start) / 1000) }
            let entries = try Outbox(store: store).entries().filter { $0.operation == SpendingCalls.location }
            #expect(entries.count <= 1)
            clock.advance(.seconds(10))
        }
        // Then it was kept once a minute, queued once every 5 minutes, and one entry holds the newest kept position
        #expect(saves == Array(stride(from: 0, to: 1800, by: 60)))
        #expect(pushes == Array(stride(from: 0, to: 1800, by: 300)))
        let entries = try Outbox(store: store).entries().filter { $0.operation == SpendingCalls.location }
        #expect(entries.count == 1)
        let sent = try JSONDecoder().decode(LocationCall.self, from: try #require(entries.first).payload)
        let last = try #require(try tracker.last())
        #expect(sent.latitude == last.position.latitude && sent.at == last.at)
        #expect(abs(last.position.latitude - (43.7 + 174 * 0.0001)) < 1e-9)
    }
}
