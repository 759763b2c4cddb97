import EventualAPI
import EventualKit
import Foundation
import GRDB

/// How long a budget runs before it starts again.
public enum LimitPeriod: String, Sendable, Codable, CaseIterable {
    case daily, weekly, monthly

    var word: String {
        switch self {
        case .daily: return "daily"
        case .weekly: return "weekly"
        case .monthly: return "monthly"
        }
    }
}

/// A budget: at most `amountMinor` of `currency` per period, on one category or on everything.
public struct SpendingLimit: Sendable, Equatable, Codable, FetchableRecord {
    public let period: LimitPeriod
    /// Empty for every category.
    public let category: String
    public let currency: String
    public let amountMinor: Int64

    public init(row: Row) throws {
        period = LimitPeriod(rawValue: row["period"]) ?? .monthly
        category = row["category"]
        currency = row["currency"]
        amountMinor = row["amountMinor"]
    }

    init(period: LimitPeriod, category: String, currency: String, amountMinor: Int64) {
        self.period = period
        self.category = category
        self.currency = currency
        self.amountMinor = amountMinor
    }
}

/// A budget a write went over.
public struct LimitWarning: Sendable, Equatable, CustomStringConvertible {
    public let limit: SpendingLimit
    public let spentMinor: Int64

    /// "Over your weekly food limit: EUR 132.40 of 120.00".
    public var description: String {
        let what = limit.category.isEmpty ? "" : "\(limit.category) "
        return "Over your \(limit.period.word) \(what)limit: \(Money(minorUnits: spentMinor, currency: limit.currency)) of "
            + Money(minorUnits: limit.amountMinor, currency: limit.currency).amountText
    }
}

/// Budgets kept on this device and checked at each write (they are advice, not a sync concern).
public struct Limits: Sendable {
    let store: LocalStore
    let configuration: SpendingConfiguration

    /// Sets (or replaces) a budget.
    @discardableResult
    public func set(_ period: LimitPeriod, amount: String, currency: String, category: String? = nil) async throws -> SpendingLimit {
        let code = currency.uppercased()
        guard Currency.isCode(code) else { throw SpendingError.invalidCurrency(currency) }
        let limit = SpendingLimit(period: period, category: Categories.normalized(category) ?? "", currency: code,
                                  amountMinor: try AmountText.parse(amount, currency: code))
        if let category = Categories.normalized(category) {
            _ = try Ledger.text(category, field: "category", collection: SyncCollections.spendingTransactions)
        }
        try await store.write { tx in
            try tx.db.execute(sql: """
                INSERT INTO spending_limits (period, category, currency, amountMinor) VALUES (?, ?, ?, ?)
                ON CONFLICT (period, category, currency) DO UPDATE SET amountMinor = excluded.amountMinor
                """, arguments: [limit.period.rawValue, limit.category, limit.currency, limit.amountMinor])
        }
        return limit
    }

    /// Removes a budget; false when there was none.
    @discardableResult
    public func remove(_ period: LimitPeriod, currency: String, category: String? = nil) async throws -> Bool {
        try await store.write { tx in
            try tx.db.execute(sql: "DELETE FROM spending_limits WHERE period = ? AND category = ? AND currency = ?",
                              arguments: [period.rawValue, Categories.normalized(category) ?? "", currency.uppercased()])
            return tx.db.changesCount > 0
        }
    }

    public func all() throws -> [SpendingLimit] {
        try store.reader.read { db in try SpendingLimit.fetchAll(db, sql: "SELECT * FROM spending_limits ORDER BY period, category, currency") }
    }

    /// The budgets `transaction` (an expense) leaves overspent, with what was spent in each period so far.
    func check(after transaction: SpendingTransaction) throws -> [LimitWarning] {
        guard transaction.kind == .expense else { return [] }
        let category = transaction.category ?? ""
        let now = configuration.clock()
        return try store.reader.read { db in
            let limits = try SpendingLimit.fetchAll(db, sql: """
                SELECT * FROM spending_limits WHERE currency = ? AND (category = '' OR category = ?)
                """, arguments: [transaction.currency, category])
            return try limits.compactMap { limit in
                let start = Self.start(of: limit.period, now: now, calendar: configuration.calendar)
                var sql = "SELECT COALESCE(SUM(amountMinor), 0) FROM spending_transactions WHERE kind = 'expense' AND currency = ? AND occurredAt >= ? AND occurredAt <= ?"
                var arguments: [any DatabaseValueConvertible] = [limit.currency, start, max(now, transaction.occurredAt)]
                if !limit.category.isEmpty {
                    sql += " AND category = ?"
                    arguments.append(limit.category)
                }
                let spent = try Int64.fetchOne(db, sql: sql, arguments: StatementArguments(arguments)) ?? 0
                // NB: only when this transaction falls in the current period; a write about last year is no news about this week.
                guard transaction.occurredAt >= start, spent > limit.amountMinor else { return nil }
                return LimitWarning(limit: limit, spentMinor: spent)
            }
        }
    }

    /// The first moment of the period that holds `now`: today, this ISO week (Monday), this month.
    static func start(of period: LimitPeriod, now: Int64, calendar: Calendar) -> Int64 {
        let date = Date(timeIntervalSince1970: Double(now) / 1000)
        let start: Date?
        switch period {
        case .daily: start = calendar.startOfDay(for: date)
        case .weekly: start = calendar.dateInterval(of: .weekOfYear, for: date)?.start
        case .monthly: start = calendar.dateInterval(of: .month, for: date)?.start
        }
        return Int64((start ?? date).timeIntervalSince1970 * 1000)
    }
}
