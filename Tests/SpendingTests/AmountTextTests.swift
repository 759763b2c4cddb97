import EventualAPI
import Foundation
import Testing
@testable import Spending

@Suite("Amounts are read exactly, never guessed")
struct AmountTextTests {
    @Test func aLoneSeparatorBeforeThreeDigitsIsRefusedWithBothReadings() throws {
        let cases: [(String, [String])] = [("1.234", ["1.23", "1234"]), ("12.345", ["12.35", "12345"]), ("1,234", ["1,23", "1234"]),
                                           ("999.999", ["1000.00", "999999"]), ("12.500", ["12.50", "12500"])]
        for (text, readings) in cases {
            #expect(throws: SpendingError.ambiguousAmount(text, currency: "EUR", digits: 2, readings: readings)) {
                try AmountText.parse(text, currency: "EUR")
            }
        }
        #expect(SpendingError.ambiguousAmount("1.234", currency: "EUR", digits: 2, readings: ["1.23", "1234"]).description
                == "EUR has 2 decimals: did you mean 1.23 or 1234?")
        #expect(SpendingError.ambiguousAmount("1.234", currency: "JPY", digits: 0, readings: ["1", "1234"]).description
                == "JPY has no decimals: did you mean 1 or 1234?")
        #expect(throws: SpendingError.ambiguousAmount("1.234", currency: "JPY", digits: 0, readings: ["1", "1234"])) {
            try AmountText.parse("1.234", currency: "JPY")
        }
    }

    @Test func moreDecimalsThanTheCurrencyHasAreRefusedNeverScaledUp() throws {
        // These used to be read as thousands: 0.015 became EUR 15.00, 0.001 EUR 1.00
        for (text, typed) in [("0.015", 3), ("0.001", 3), ("1234.567", 3), ("1 234,567", 3), ("1.234,567", 3), ("12.5055", 4), ("0,015", 3)] {
            #expect(throws: SpendingError.tooManyDecimals(text, currency: "EUR", digits: 2, typed: typed)) {
                try AmountText.parse(text, currency: "EUR")
            }
        }
        #expect(throws: SpendingError.tooManyDecimals("-5.555", currency: "EUR", digits: 2, typed: 3)) {
            try AmountText.parseSigned("-5.555", currency: "EUR", decimal: .dot)
        }
        #expect(SpendingError.tooManyDecimals("0.015", currency: "EUR", digits: 2, typed: 3).description
                == "EUR has 2 decimals, and '0.015' has 3: type at most 2")
    }

    @Test func anAmountBeyondTheLargestIsRefusedSoThatNoSumOverflows() throws {
        // EUR 100,000,000,000.00 is the largest; a bank export's -9999999999999.99 is refused, not summed
        #expect(try AmountText.parse("100000000000.00", currency: "EUR") == Money.largestMinorUnits)
        #expect(throws: SpendingError.amountTooLarge("100000000000.01", currency: "EUR")) {
            try AmountText.parse("100000000000.01", currency: "EUR")
        }
        #expect(throws: SpendingError.amountTooLarge("-9999999999999.99", currency: "EUR")) {
            try AmountText.parseSigned("-9999999999999.99", currency: "EUR", decimal: .dot)
        }
        #expect(SpendingError.amountTooLarge("1e20", currency: "EUR").description
                == "'1e20' is more than the largest amount recorded, EUR 100000000000.00")
    }

    @Test func unambiguousGroupingAndDecimalsAreRead() throws {
        let expected: [(String, String, Int64)] = [
            ("1.234,56", "EUR", 123_456), ("1 234,56", "EUR", 123_456), ("1,234.56", "EUR", 123_456), ("1\u{A0}234,56", "EUR", 123_456),
            ("1.234.567", "EUR", 123_456_700), ("1,234,567.8", "EUR", 123_456_780), ("1 234", "EUR", 123_400), ("12.", "EUR", 1200),
            (".5", "EUR", 50), ("1,5", "EUR", 150), ("0.01", "EUR", 1), ("12.50 EUR", "EUR", 1250), ("€12,50", "EUR", 1250),
            ("1.234", "BHD", 1234), ("1.250", "KWD", 1250), ("1234", "JPY", 1234), ("1.234.567", "JPY", 1_234_567),
        ]
        for (text, currency, minor) in expected {
            #expect(try AmountText.parse(text, currency: currency) == minor, "\(text) \(currency)")
        }
        // A file's known separator settles a lone one
        #expect(try AmountText.parseSigned("-1.234", currency: "EUR", decimal: .comma) == -123_400)
        #expect(try AmountText.parseSigned("1,234", currency: "EUR", decimal: .dot) == 123_400)
        #expect(try AmountText.parseSigned("1,23", currency: "EUR", decimal: .comma) == 123)
        for bad in ["", " ", ".", "-", "1e308", "NaN", "12.34.5", "1,23,456", "abc", "99999999999999999999", "0"] {
            #expect(throws: SpendingError.self, "\(bad)") { try AmountText.parse(bad, currency: "EUR") }
        }
    }

    @Test func aFilesDecimalSeparatorIsReadOnceFromTheAmountsThatTell() throws {
        #expect(try AmountText.decimalSeparator(of: ["-42,10", "1.234", "-5"], currency: "EUR") == .comma)
        #expect(try AmountText.decimalSeparator(of: ["1.234", "12.50"], currency: "EUR") == .dot)
        #expect(try AmountText.decimalSeparator(of: ["1.234,56"], currency: "EUR") == .comma)
        #expect(try AmountText.decimalSeparator(of: ["1.234", "12"], currency: "EUR") == nil)
        #expect(throws: SpendingError.mixedDecimalSeparators(dot: "12.50", comma: "3,20")) {
            try AmountText.decimalSeparator(of: ["12.50", "3,20"], currency: "EUR")
        }
    }

    @Test func everyWayOfTypingAnAmountSharesTheRule() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let ledger = try scratchLedger(scratch, clock: TestClock())
        try await ledger.addAccount(name: "Cash", currency: "EUR")
        try await ledger.addAccount(name: "Bank", currency: "EUR")
        let ambiguous = SpendingError.ambiguousAmount("1.234", currency: "EUR", digits: 2, readings: ["1.23", "1234"])
        await #expect(throws: ambiguous) { try await ledger.record(.expense, TransactionDetails(amount: "1.234", account: "Cash")) }
        await #expect(throws: ambiguous) { try await ledger.transfer("1.234", from: "Cash", to: "Bank") }
        await #expect(throws: ambiguous) { try await ledger.limits.set(.weekly, amount: "1.234", currency: "EUR") }
        await #expect(throws: ambiguous) { try await ledger.addAccount(name: "Other", currency: "EUR", openingBalance: "1.234") }
        let recorded = try await ledger.record(.expense, TransactionDetails(amount: "1.23", account: "Cash"))
        await #expect(throws: ambiguous) { try await ledger.edit(recorded.transaction.id, TransactionDetails(amount: "1.234")) }
        #expect(try ledger.transactions().map(\.amountMinor) == [123])
        #expect(try ledger.limits.all().isEmpty)
    }
}
