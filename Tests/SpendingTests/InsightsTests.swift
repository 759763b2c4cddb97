import EventualAPI
import Foundation
import Testing
@testable import EventualServer

@Suite("Insights on hand-made series, answers worked out here")
struct InsightsTests {
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 24 * hour
    static let t0: Int64 = 1_800_000_000_000

    @Test func aChargeMoreThan50KilometresFromThePreviousWithin24HoursIsFlagged() {
        // 0.5 degrees of latitude on the equator: 0.5 × π/180 × 6,371,008.8 m = 55,597 m → "56 km".
        // 0.4 degrees: 44,478 m, under 50 km.
        let records = [
            SpentRecord(id: "a", amountMinor: 1000, category: "food", occurredAt: Self.t0, latitude: 0, longitude: 0),
            SpentRecord(id: "b", amountMinor: 2000, category: "food", occurredAt: Self.t0 + 3 * Self.hour, latitude: 0.4, longitude: 0),
            SpentRecord(id: "c", amountMinor: 4500, category: "leisure", occurredAt: Self.t0 + 6 * Self.hour, latitude: -0.1, longitude: 0),
            // 30 hours after c, 1 degree away (111 km), but past the 24 hours
            SpentRecord(id: "d", amountMinor: 500, category: "food", occurredAt: Self.t0 + 36 * Self.hour, latitude: 0.9, longitude: 0),
        ]
        let findings = Insights.locations(records)
        #expect(findings.map(\.transactionId) == ["c"])
        #expect(findings.first?.message == "EUR 45.00 on leisure on 2027-01-15 was charged 56 km from the previous charge, 3.0 hours earlier (more than 50 km within 24 hours).")
    }

    /// Five earlier food expenses: 10, 12, 11, 13, 9 euros. Median 11.00; deviations 1, 1, 0, 2, 2 → MAD 1.00.
    static let history = [1000, 1200, 1100, 1300, 900].enumerated().map { index, amount in
        SpentRecord(id: "h\(index)", amountMinor: Int64(amount), category: "food", occurredAt: t0 + Int64(index) * day)
    }

    @Test func whenMostEarlierExpensesCostTheSameTheMessageSaysMedianNotEveryOne() {
        // Eight earlier coffees: seven at 3.50 and one at 48.00 (median 3.50, MAD 0)
        let coffees = [350, 350, 350, 4800, 350, 350, 350, 350].enumerated().map { index, amount in
            SpentRecord(id: "c\(index)", amountMinor: Int64(amount), category: "coffee", occurredAt: Self.t0 + Int64(index) * Self.day)
        }
        let flagged = Insights.amounts(coffees + [SpentRecord(id: "x", amountMinor: 900, category: "coffee", occurredAt: Self.t0 + 10 * Self.day)])
        #expect(flagged.map(\.transactionId) == ["x"])
        let message = flagged.first { $0.transactionId == "x" }?.message
        #expect(message == "EUR 9.00 on coffee on 2027-01-25 differs from the EUR 3.50 that 7 of your 8 earlier coffee expenses cost (their median).")
        // When every one did cost it, it says so
        let same = Array(coffees.prefix(3)) + Array(coffees.suffix(4))
        let exact = Insights.amounts(same + [SpentRecord(id: "y", amountMinor: 900, category: "coffee", occurredAt: Self.t0 + 10 * Self.day)])
        #expect(exact.first?.message == "EUR 9.00 on coffee on 2027-01-25 differs from the EUR 3.50 that every one of your 7 earlier coffee expenses cost.")
    }

    @Test func anAmountMoreThanThreeAndAHalfMADsFromTheMedianIsFlagged() {
        // 15.00 is 4.00 from the median: 4.0 MADs > 3.5.
        let flagged = Insights.amounts(Self.history + [SpentRecord(id: "x", amountMinor: 1500, category: "food", occurredAt: Self.t0 + 10 * Self.day)])
        #expect(flagged.map(\.transactionId) == ["x"])
        #expect(flagged.first?.message == "EUR 15.00 on food on 2027-01-25 is 4.0 median absolute deviations from the median of your 5 earlier food expenses (median EUR 11.00, deviation EUR 1.00; more than 3.5 is unusual).")
        // 14.00 is 3.00 away: 3.0 MADs, not flagged; nor is another category's 15.00
        #expect(Insights.amounts(Self.history + [SpentRecord(id: "y", amountMinor: 1400, category: "food", occurredAt: Self.t0 + 10 * Self.day)]).isEmpty)
        #expect(Insights.amounts(Self.history + [SpentRecord(id: "z", amountMinor: 1500, category: "leisure", occurredAt: Self.t0 + 10 * Self.day)]).isEmpty)
    }

    @Test func fewerThanFiveEarlierExpensesAreNotEnoughToJudge() {
        let four = Array(Self.history.prefix(4)) + [SpentRecord(id: "x", amountMinor: 100_000, category: "food", occurredAt: Self.t0 + 10 * Self.day)]
        #expect(Insights.amounts(four).isEmpty)
    }

    @Test func aCategoryMoreThan30PercentAboveItsOwn90DayAverageIsFlagged() {
        let now = Self.t0 + 200 * Self.day
        // 90 days before the last 30: 300.00 of leisure → an average of 100.00 per 30 days.
        let baseline = (0..<3).map { SpentRecord(id: "b\($0)", amountMinor: 10_000, category: "leisure", occurredAt: now - Int64(40 + 30 * $0) * Self.day) }
        // 130.00 in the last 30 days is exactly 30% above: not more than 30%, not flagged.
        let exactly = baseline + [SpentRecord(id: "n", amountMinor: 13_000, category: "leisure", occurredAt: now - 2 * Self.day)]
        #expect(Insights.categories(exactly, now: now).isEmpty)
        // 131.00 is 31% above.
        let above = baseline + [SpentRecord(id: "n", amountMinor: 13_100, category: "leisure", occurredAt: now - 2 * Self.day)]
        let findings = Insights.categories(above, now: now)
        #expect(findings.map(\.category) == ["leisure"])
        #expect(findings.first?.message == "Leisure: EUR 131.00 in the last 30 days is 31% above your average of EUR 100.00 per 30 days over the 90 days before.")
        // Incomes and transfers never count as spending
        let income = baseline + [SpentRecord(id: "i", kind: "income", amountMinor: 90_000, category: "leisure", occurredAt: now - Self.day)]
        #expect(Insights.find(income, now: now).isEmpty)
    }

    /// A stranger imported 9,500 expenses of EUR 9,999,999,999,999.99 and one look at the insights
    /// stopped the server for everyone (an Int64 sum overflowed). No app records such an amount now,
    /// and the server neither trusts nor traps on one that another client sent.
    @Test func anAmountNoAppRecordsIsLeftOutAndSumsNeverTrap() {
        let fields: (Int64) -> [String: SyncValue] = { ["kind": "expense", "amountMinor": .integer($0), "currency": "EUR", "occurredAt": .integer(Self.t0)] }
        #expect(SpentRecord(id: "ok", fields: fields(Money.largestMinorUnits)) != nil)
        #expect(SpentRecord(id: "huge", fields: fields(Money.largestMinorUnits + 1)) == nil)
        #expect(SpentRecord(id: "negative", fields: fields(-500)) == nil)
        // Sums past 64 bits stop at the largest value, and still say what they found
        let now = Self.t0 + 200 * Self.day
        let huge = Int64.max / 2
        let records = [SpentRecord(id: "b", amountMinor: huge, category: "rent", occurredAt: now - 50 * Self.day)]
            + (0..<3).map { SpentRecord(id: "n\($0)", amountMinor: huge, category: "rent", occurredAt: now - Int64($0 + 1) * Self.day) }
        let findings = Insights.categories(records, now: now)
        #expect(findings.map(\.category) == ["rent"])
        #expect(findings.first?.message.contains(Money(minorUnits: .max, currency: "EUR").description) == true)
    }
}
