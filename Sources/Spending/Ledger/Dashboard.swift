import EventualAPI
import EventualKit
import Foundation
import GRDB

/// The home screen (seed F7): the last 30 days spent and received, every account's balance,
/// spending per category, and the last 7 days day by day. Always computed from the local
/// database, so it works offline and is never stale about the person's own writes.
public struct Dashboard: Sendable, Equatable, Codable {
    public struct Totals: Sendable, Equatable, Codable {
        public let currency: String
        public let spentMinor: Int64
        public let receivedMinor: Int64
    }
    public struct Balance: Sendable, Equatable, Codable {
        public let id: String
        public let name: String
        public let kind: AccountKind
        public let currency: String
        public let balanceMinor: Int64
    }
    public struct CategorySpending: Sendable, Equatable, Codable {
        public let category: String
        public let currency: String
        public let spentMinor: Int64
    }
    public struct DaySpending: Sendable, Equatable, Codable {
        /// `2026-11-20` in the person's time zone.
        public let day: String
        public let currency: String
        public let spentMinor: Int64
    }

    public let last30Days: [Totals]
    public let accounts: [Balance]
    /// Largest first.
    public let categories: [CategorySpending]
    /// Oldest day first, every day of the 7 for every currency spent in them.
    public let last7Days: [DaySpending]

    static func compute(ledger: Ledger) throws -> Dashboard {
        let now = ledger.now
        let calendar = ledger.configuration.calendar
        let since30 = now - 30 * 86_400_000
        let today = calendar.startOfDay(for: Date(timeIntervalSince1970: Double(now) / 1000))
        let days = (0..<7).map { calendar.date(byAdding: .day, value: $0 - 6, to: today)! }
        let since7 = Int64(days[0].timeIntervalSince1970 * 1000)
        let (totals, categories, recent) = try ledger.store.reader.read { db in
            let totals = try Row.fetchAll(db, sql: """
                SELECT currency, SUM(CASE WHEN kind = 'expense' THEN amountMinor ELSE 0 END) AS spent,
                       SUM(CASE WHEN kind = 'income' THEN amountMinor ELSE 0 END) AS received
                FROM spending_transactions WHERE occurredAt > ? AND occurredAt <= ? AND kind IN ('expense', 'income')
                GROUP BY currency ORDER BY currency
                """, arguments: [since30, now]).map { Totals(currency: $0["currency"], spentMinor: $0["spent"], receivedMinor: $0["received"]) }
            let categories = try Row.fetchAll(db, sql: """
                SELECT COALESCE(category, 'other') AS category, currency, SUM(amountMinor) AS spent
                FROM spending_transactions WHERE occurredAt > ? AND occurredAt <= ? AND kind = 'expense'
                GROUP BY 1, currency ORDER BY spent DESC, category
                """, arguments: [since30, now]).map { CategorySpending(category: $0["category"], currency: $0["currency"], spentMinor: $0["spent"]) }
            let recent = try Row.fetchAll(db, sql: """
                SELECT occurredAt, currency, amountMinor FROM spending_transactions
                WHERE occurredAt >= ? AND occurredAt <= ? AND kind = 'expense'
                """, arguments: [since7, now]).map { (at: $0["occurredAt"] as Int64, currency: $0["currency"] as String, amount: $0["amountMinor"] as Int64) }
            return (totals, categories, recent)
        }
        var perDay: [String: [Int: Int64]] = [:]
        for entry in recent {
            let start = calendar.startOfDay(for: Date(timeIntervalSince1970: Double(entry.at) / 1000))
            guard let index = days.firstIndex(of: start) else { continue }
            perDay[entry.currency, default: [:]][index, default: 0] += entry.amount
        }
        var last7: [DaySpending] = []
        for currency in perDay.keys.sorted() {
            for (index, day) in days.enumerated() {
                last7.append(DaySpending(day: DateText.format(Int64(day.timeIntervalSince1970 * 1000), calendar: calendar, withTime: false),
                                         currency: currency, spentMinor: perDay[currency]?[index] ?? 0))
            }
        }
        let balances = try ledger.balances().map {
            Balance(id: $0.account.id, name: $0.account.name, kind: $0.account.kind, currency: $0.account.currency, balanceMinor: $0.balanceMinor)
        }
        return Dashboard(last30Days: totals, accounts: balances, categories: categories, last7Days: last7)
    }
}
