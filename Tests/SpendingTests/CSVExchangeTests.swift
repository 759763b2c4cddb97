import EventualAPI
import Foundation
import Testing
@testable import Spending

@Suite("CSV: the app's export reads back as it was, a bank's with its decimal separator, files never destroyed")
struct CSVExchangeTests {
    @Test func theAppsOwnExportImportsBackLosslessly() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        // Given a ledger with every kind of transaction and awkward text
        let ledger = try scratchLedger(scratch, clock: TestClock())
        try await ledger.addAccount(name: "Cash", currency: "EUR", openingBalance: "20")
        try await ledger.addAccount(name: "Main bank", kind: .bank, currency: "EUR")
        try await ledger.record(.expense, TransactionDetails(amount: "12.34", account: "Cash", category: "Food",
                                                             note: "=SUM(A1), \"quoted\";\nsecond line", date: "2026-01-10T08:15:30",
                                                             place: "-Marché U", position: GeoPosition(latitude: -33.9, longitude: 151.2)))
        try await ledger.record(.income, TransactionDetails(amount: "1.500,00", account: "Main bank", category: "salary", note: "'quoted'"))
        try await ledger.transfer("50", from: "Main bank", to: "Cash", note: "to the wallet")
        try await ledger.record(.expense, TransactionDetails(amount: "3", account: "Cash"))
        let file = scratch.url.appendingPathComponent("export.csv")
        #expect(try CSVExchange(ledger: ledger).export(to: file.path) == 4)

        // When another person's fresh device imports it
        let other = try ScratchFolder()
        defer { other.remove() }
        let fresh = try scratchLedger(other, clock: TestClock())
        let summary = try await CSVExchange(ledger: fresh).importCSV(from: file, account: nil)

        // Then every transaction is back as it was, in accounts of the same names
        #expect(summary.format == .spendiq && summary.decimalSeparator == .dot)
        #expect(summary.imported == 4 && summary.skippedCount == 0, "\(summary.skipped)")
        #expect(Set(summary.openedAccounts) == ["Cash", "Main bank"])
        func shape(_ ledger: Ledger) throws -> [[String]] {
            let names = Dictionary(uniqueKeysWithValues: try ledger.accounts().map { ($0.id, $0.name) })
            return try ledger.transactions().map {
                [$0.id, names[$0.accountId] ?? "?", $0.kind.rawValue, "\($0.amountMinor)", $0.currency, $0.category ?? "nil", $0.note ?? "nil",
                 "\($0.occurredAt)", $0.place ?? "nil", "\($0.latitude ?? 0),\($0.longitude ?? 0)", "\($0.automatic)",
                 $0.toAccountId.map { names[$0] ?? "?" } ?? "nil"]
            }
        }
        #expect(try shape(fresh) == shape(ledger))
        #expect(try fresh.transactions().filter { $0.kind == .expense }.count == 2)
        // and importing it again adds nothing, here or on the device that exported it
        #expect(try await CSVExchange(ledger: fresh).importCSV(from: file, account: nil).alreadyImported == 4)
        #expect(try await CSVExchange(ledger: ledger).importCSV(from: file, account: nil).alreadyImported == 4)
        // and an export is not a bank's file to pour into one account
        await #expect(throws: SpendingError.self) { try await CSVExchange(ledger: fresh).importCSV(from: file, account: "Cash") }
    }

    @Test func aBanksFileIsReadWithOneDecimalSeparatorForTheWholeFile() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let ledger = try scratchLedger(scratch, clock: TestClock())
        try await ledger.addAccount(name: "Bank", kind: .bank, currency: "EUR")
        let csv = CSVExchange(ledger: ledger)
        // A decimal point: -5.555 has three decimals and is refused, never read as 5,555.00
        let dots = scratch.url.appendingPathComponent("dots.csv")
        try "date,amount,description\n2026-01-15,-42.10,a\n2026-01-16,-5.555,b\n2026-01-17,\"1,234.00\",c\n".write(to: dots, atomically: true, encoding: .utf8)
        let first = try await csv.importCSV(from: dots, account: "Bank")
        #expect(first.decimalSeparator == .dot && first.imported == 2 && first.skippedCount == 1)
        #expect(first.skipped == ["line 3: EUR has 2 decimals, and '-5.555' has 3: type at most 2"])
        #expect(Set(try ledger.transactions().map(\.amountMinor)) == [4210, 123_400])
        // A decimal comma: 1.234 groups thousands
        let commas = scratch.url.appendingPathComponent("commas.csv")
        try "Fecha;Importe;Concepto\n15/01/2026;-42,10;x\n16/01/2026;1.234;b\n".write(to: commas, atomically: true, encoding: .utf8)
        let second = try await csv.importCSV(from: commas, account: "Bank")
        #expect(second.decimalSeparator == .comma && second.imported == 2)
        #expect(try ledger.transactions().contains { $0.amountMinor == 123_400 && $0.note == "b" && $0.kind == .income })
        // Amounts that never tell are refused as a whole, unless the person says
        let silent = scratch.url.appendingPathComponent("silent.csv")
        try "date,amount\n2026-01-15,-1.234\n2026-01-16,-12\n".write(to: silent, atomically: true, encoding: .utf8)
        await #expect(throws: SpendingError.undecidedDecimalSeparator(example: "-1.234")) { try await csv.importCSV(from: silent, account: "Bank") }
        let told = try await csv.importCSV(from: silent, account: "Bank", decimal: .comma)
        #expect(told.imported == 2 && told.decimalSeparator == .comma)
        #expect(try ledger.transactions().contains { $0.amountMinor == 123_400 && $0.kind == .expense })
        // Binary garbage is no CSV file, said without echoing its bytes
        let garbage = scratch.url.appendingPathComponent("garbage.csv")
        try Data([0x4E, 0x1B, 0x5B, 0x32, 0x4A, 0x00, 0xFF, 0x0A, 0x01]).write(to: garbage)
        await #expect(throws: SpendingError.file("\(garbage.path) is not a text (CSV) file")) { try await csv.importCSV(from: garbage, account: "Bank") }
        // Both separators in one file: refused, naming an example of each
        let mixed = scratch.url.appendingPathComponent("mixed.csv")
        try "date,amount\n2026-01-15,-1.50\n2026-01-16,\"-2,50\"\n".write(to: mixed, atomically: true, encoding: .utf8)
        await #expect(throws: SpendingError.mixedDecimalSeparators(dot: "-1.50", comma: "-2,50")) { try await csv.importCSV(from: mixed, account: "Bank") }
    }

    @Test func anExportNeverDestroysWhatItWouldWriteOver() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let ledger = try scratchLedger(scratch, clock: TestClock())
        try await ledger.addAccount(name: "Cash", currency: "EUR")
        try await ledger.record(.expense, TransactionDetails(amount: "3", account: "Cash"))
        let csv = CSVExchange(ledger: ledger)
        let manager = FileManager.default
        // An existing file is kept unless the person agrees to write over it
        let existing = scratch.url.appendingPathComponent("precious.txt")
        try "precious".write(to: existing, atomically: true, encoding: .utf8)
        #expect(throws: SpendingError.exportExists(existing.path)) { try csv.export(to: existing.path) }
        #expect(try String(contentsOf: existing, encoding: .utf8) == "precious")
        #expect(try csv.export(to: existing.path, overwrite: true) == 1)
        #expect(try String(contentsOf: existing, encoding: .utf8).hasPrefix("id,date,"))
        // A symbolic link is written through: the link stays, its target gets the export
        let target = scratch.url.appendingPathComponent("target.csv")
        try "old".write(to: target, atomically: true, encoding: .utf8)
        let link = scratch.url.appendingPathComponent("link.csv")
        try manager.createSymbolicLink(at: link, withDestinationURL: target)
        #expect(throws: SpendingError.exportExists(link.path)) { try csv.export(to: link.path) }
        try csv.export(to: link.path, overwrite: true)
        #expect(try manager.destinationOfSymbolicLink(atPath: link.path) == target.path)
        #expect(try String(contentsOf: target, encoding: .utf8).hasPrefix("id,date,"))
        // A link to a file not there yet creates its target
        let dangling = scratch.url.appendingPathComponent("dangling.csv")
        let later = scratch.url.appendingPathComponent("later.csv")
        try manager.createSymbolicLink(at: dangling, withDestinationURL: later)
        try csv.export(to: dangling.path)
        #expect(try manager.destinationOfSymbolicLink(atPath: dangling.path) == later.path && manager.fileExists(atPath: later.path))
        // Devices and folders are refused, forced or not, and left as they were
        for path in ["/dev/null", "/dev/full", scratch.url.path] {
            #expect(throws: SpendingError.exportNotAFile(path)) { try csv.export(to: path, overwrite: true) }
        }
        let deviceLink = scratch.url.appendingPathComponent("device.csv")
        try manager.createSymbolicLink(atPath: deviceLink.path, withDestinationPath: "/dev/full")
        #expect(throws: SpendingError.exportNotAFile(deviceLink.path)) { try csv.export(to: deviceLink.path, overwrite: true) }
        var info = stat()
        #expect(stat("/dev/full", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR)
        #expect(stat("/dev/null", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR)
        // No temporary file is left behind
        #expect(try manager.contentsOfDirectory(atPath: scratch.url.path).filter { $0.hasPrefix(".") }.isEmpty)
    }
}
