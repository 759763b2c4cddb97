import Crypto
import EventualAPI
import EventualKit
import Foundation
import GRDB

/// How long a budget runs before it starts again.
public enum LimitPeriod: String, Sendable, Codable, CaseIterable, DatabaseValueConvertible {
    case daily, weekly, monthly

    /// A period this version does not know (a newer app's) is read as monthly.
    public init(from decoder: any Decoder) throws {
        self = LimitPeriod(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .monthly
    }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> LimitPeriod? {
        String.fromDatabaseValue(value).map { LimitPeriod(rawValue: $0) ?? .monthly }
    }

    var word: String {
        switch self {
        case .daily: return "daily"
        case .weekly: return "weekly"
        case .monthly: return "monthly"
        }
    }
}

/// A budget: at most `amountMinor` of `currency` per period, on one category or on everything;
/// a record of the `spending_limits` collection, one per period, category and currency.
public struct SpendingLimit: SyncRecord, Equatable {
    public static let collection = SyncCollections.spendingLimits

    public let period: LimitPeriod
    /// Empty for every category.
    public let category: String
    public let currency: String
    public var amountMinor: Int64

    /// Made from its period, category and currency, so that two devices that set the same budget offline set one record.
    public var id: String { Limits.recordID(period, category: category, currency: currency) }

    /// NB: no `id`: it is made from the others, never read from the row.
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case period, category, currency, amountMinor
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

/// The person's budgets, synced like accounts (so every device of theirs checks them) and
/// checked at each write on the device.
public struct Limits: Sendable {
    let store: LocalStore
    let configuration: SpendingConfiguration

    /// Sets (or replaces) a budget.
    @discardableResult
    public func set(_ period: LimitPeriod, amount: String, currency: String, category: String? = nil) async throws -> SpendingLimit {
        let code = currency.uppercased()
        guard Currency.isKnown(code) else { throw SpendingError.invalidCurrency(currency) }
        let limit = SpendingLimit(period: period, category: Categories.normalized(category) ?? "", currency: code,
                                  amountMinor: try AmountText.parse(amount, currency: code))
        if let category = Categories.normalized(category) {
            _ = try Ledger.text(category, field: "category", collection: SyncCollections.spendingTransactions)
        }
        try await store.write { tx in try Self.save(limit, tx) }
        return limit
    }

    /// Removes a budget on every device; false when there was none.
    @discardableResult
    public func remove(_ period: LimitPeriod, currency: String, category: String? = nil) async throws -> Bool {
        let id = Self.recordID(period, category: Categories.normalized(category) ?? "", currency: currency.uppercased())
        return try await store.write { tx in try SpendingSchema.limits.delete(id, in: tx) }
    }

    public func all() throws -> [SpendingLimit] {
        try store.reader.read { db in try SpendingLimit.fetchAll(db, sql: "SELECT * FROM spending_limits ORDER BY period, category, currency") }
    }

    /// Queues the budgets this device kept before budgets synced, once, so that they reach the
    /// person's other devices and survive another person's sign-in here.
    func adoptDeviceLimits() async throws {
        let waiting = try await store.reader.read { db in try SpendingLimit.fetchAll(db, sql: "SELECT * FROM spending_device_limits") }
        guard !waiting.isEmpty else { return }
        try await store.write { tx in
            for limit in waiting { try Self.save(limit, tx, keepingExisting: true) }
            try tx.db.execute(sql: "DELETE FROM spending_device_limits")
        }
    }

    /// One record per period, category and currency, whichever device sets it.
    static func recordID(_ period: LimitPeriod, category: String, currency: String) -> String {
        let digest = SHA256.hash(data: Data(category.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
        return "limit-\(period.rawValue)-\(currency.lowercased())-\(digest)"
    }

    private static func save(_ limit: SpendingLimit, _ tx: LocalTransaction, keepingExisting: Bool = false) throws {
        if try SpendingSchema.limits.record(limit.id, tx.db) != nil {
            guard !keepingExisting else { return }
            try SpendingSchema.limits.update(limit.id, in: tx) { $0.amountMinor = limit.amountMinor }
        } else {
            try SpendingSchema.limits.insert(limit, in: tx)
        }
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
