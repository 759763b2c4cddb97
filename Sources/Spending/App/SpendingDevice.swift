import EventualAPI
import EventualKit
import Foundation
import GRDB

extension DeviceApp {
    /// SpendiQ to the device layer: its tables, its words for what waits in the outbox, and its
    /// account rules (seed 002): after 7 days offline the device's data is wiped, offline only the
    /// person whose data is here signs in, and an online sign-in needs a verified email.
    static let spendiQ = DeviceApp(
        .spendiQ, version: UserSpending.version, migrations: SpendingSchema.migrations,
        policy: AccountPolicy(wipesAfterOfflineAge: true, onePersonPerDevice: true, admits: { link in
            if case .forbidden? = try? await link.client.getSpendingAccount() { false } else { true }
        }),
        // NB: "last seen" and the position are recorded by every start: they are not the person's
        // work, and a sign-out or another person's sign-in must not wait for them.
        isPersonsWork: { $0.operation != SpendingCalls.lastSeen && $0.operation != SpendingCalls.location },
        recordName: recordName
    ) { entry, store in
        switch (entry.kind, entry.operation) {
        case (.change, SyncCollections.spendingAccounts.name):
            let name = try store.reader.read { db in
                try String.fetchOne(db, sql: "SELECT name FROM spending_accounts WHERE id = ?", arguments: [entry.recordID ?? ""])
            }
            return "account \(name ?? String((entry.recordID ?? "?").suffix(8)))"
        case (.change, SyncCollections.spendingLimits.name): return "budget"
        case (.change, _): return "transaction \(String((entry.recordID ?? "?").suffix(8)))"
        case (.call, SpendingCalls.lastSeen): return "last visit"
        case (.call, SpendingCalls.location): return "position"
        case (.call, SpendingCalls.offerView): return "view of an offer"
        case (.call, let operation): return operation
        }
    }
}

extension DeviceApp {
    /// "expense EUR 9.00 on Home", "account Home": a record as SpendiQ names it (a receipt's
    /// upload says whose it is).
    private static func recordName(_ collection: String, _ id: String, _ store: LocalStore) throws -> String? {
        try store.reader.read { db in
            switch collection {
            case SyncCollections.spendingTransactions.name:
                guard let row = try Row.fetchOne(db, sql: """
                    SELECT t.kind, t.amountMinor, t.currency, a.name FROM spending_transactions t
                    LEFT JOIN spending_accounts a ON a.id = t.accountId WHERE t.id = ?
                    """, arguments: [id]) else { return nil }
                let money = Money(minorUnits: row["amountMinor"], currency: row["currency"])
                return "\(row["kind"] as String) \(money)" + ((row["name"] as String?).map { " on \($0)" } ?? "")
            case SyncCollections.spendingAccounts.name:
                return try String.fetchOne(db, sql: "SELECT name FROM spending_accounts WHERE id = ?", arguments: [id]).map { "account \($0)" }
            default:
                return nil
            }
        }
    }
}
