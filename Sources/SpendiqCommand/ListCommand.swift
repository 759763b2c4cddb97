import CommandLineSupport
import ArgumentParser
import EventualAPI
import EventualKit
import Foundation
import Spending

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Your transactions, newest first, marked when they wait to be sent or were refused.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions
    @Option(parsing: .unconditional, help: "Only the last N days (1 to 36600).") var days: Int?
    @Option(help: "Only this account.") var account: String?
    @Option(help: "Only this category.") var category: String?
    @OptionGroup var watching: WatchOptions

    func validate() throws {
        try usageCheck {
            if let days, !(1...36_600).contains(days) { throw CLIError("--days must be from 1 to 36600, not \(days)") }
        }
    }

    func run() async throws {
        let spending = try await global.spending()
        let query = TransactionQuery(days: days, account: account, category: category)
        guard watching.watch else {
            let transactions = try spending.ledger.transactions(query)
            print(try Self.render(transactions, states: try spending.syncStates(of: transactions), of: spending, json: output.json))
            return
        }
        let json = output.json
        try await watching.run(try spending.watchTransactions(query), json: json, engine: spending.device.engine) { snapshot in
            let states = Dictionary(snapshot.rows.map { ($0.row.id, $0.state) }, uniquingKeysWith: { first, _ in first })
            return try Self.render(snapshot.rows.map(\.row), states: states, of: spending, json: json, oneLine: json)
        }
    }

    /// The transactions as a table with their marks, or as JSON (`oneLine`: one document per line).
    static func render(_ transactions: [SpendingTransaction], states: [String: SyncState], of spending: UserSpending, json: Bool,
                       oneLine: Bool = false) throws -> String {
        let names = Dictionary(uniqueKeysWithValues: try spending.ledger.accounts(includeArchived: true).map { ($0.id, $0.name) })
        let spaces = Dictionary(uniqueKeysWithValues: try spending.spaces.list().map { ($0.id, $0.name) })
        let me = spending.session.username
        if json {
            let rows = transactions.map {
                TransactionJSON(id: $0.id, shortId: String($0.id.suffix(8)), account: names[$0.accountId], accountId: $0.accountId, kind: $0.kind.rawValue, amountMinor: $0.amountMinor,
                                currency: $0.currency, category: $0.category, note: $0.note, date: Timestamp.iso8601($0.occurredAt),
                                toAccount: $0.toAccountId.flatMap { names[$0] }, toAccountId: $0.toAccountId, place: $0.place, automatic: $0.automatic,
                                space: $0.space.map { spaces[$0] ?? $0 }, spaceId: $0.space, changedBy: $0.changedBy ?? me, receipt: $0.receipt,
                                syncState: SyncStateJSON(states[$0.id] ?? .confirmed))
            }
            return oneLine ? try Terminal.jsonLine(rows) : try Terminal.json(rows)
        }
        guard !transactions.isEmpty else { return "No transactions." }
        let calendar = spending.ledger.calendar
        let marks = transactions.map { SyncMark(states[$0.id] ?? .confirmed) }
        let marked = marks.contains { $0 != .none }
        // NB: who recorded what matters only where others record too: a ledger of one's own has no BY column.
        let shared = transactions.contains { $0.space != nil }
        var table = Table()
        table.headers = (marked ? [""] : []) + ["ID", "DATE", "ACCOUNT", "AMOUNT", "CATEGORY", "NOTE"] + (shared ? ["BY"] : [])
        table.whole = ["", "ID", "DATE", "AMOUNT"]
        table.cutFirst = ["NOTE", "CATEGORY"]
        for (transaction, mark) in zip(transactions, marks) {
            let sign = transaction.kind == .expense ? "-" : (transaction.kind == .income ? "+" : "")
            // NB: the other side of a transfer into a shared account may be someone else's account, never on this device.
            let account = (names[transaction.accountId] ?? "another account") + (transaction.toAccountId.map { " → " + (names[$0] ?? "another account") } ?? "")
            let by = transaction.changedBy.map { $0 == me ? "you" : $0 } ?? "you"
            let cells = [String(transaction.id.suffix(8)), DateText.format(transaction.occurredAt, calendar: calendar), account,
                         sign + transaction.money.description, transaction.category ?? "-",
                         (transaction.note ?? "").replacingOccurrences(of: "\n", with: " ") + (transaction.automatic ? " [imported]" : "")
                            + (transaction.receipt != nil ? " [receipt]" : "")]
                .map { Table.Cell($0) } + (shared ? [Table.Cell(by)] : [])
            table.rows.append((marked ? [Table.Cell(mark.rawValue, mark == .refused ? .red : .yellow)] : []) + cells)
        }
        return table.render() + (SyncMark.legend(marks, failures: "spendiq failures").map { "\n" + $0 } ?? "")
    }
}

/// A transaction in `--json`: every key always present (null when empty), so a script reading `note` finds it.
/// An account is named and given by its id: the other side of a transfer into a shared account
/// may be someone else's account, whose name this device never had (`toAccount` null then).
struct TransactionJSON: Encodable {
    let id: String
    /// The id's last 8 characters, as the table shows it (a command takes either).
    let shortId: String
    @JSONNullable var account: String?
    let accountId, kind: String
    let amountMinor: Int64
    let currency: String
    @JSONNullable var category: String?
    @JSONNullable var note: String?
    let date: String
    @JSONNullable var toAccount: String?
    @JSONNullable var toAccountId: String?
    @JSONNullable var place: String?
    let automatic: Bool
    @JSONNullable var space: String?
    @JSONNullable var spaceId: String?
    let changedBy: String
    /// The receipt's reference (`spendiq receipt ID` shows or saves it); null: none.
    @JSONNullable var receipt: String?
    let syncState: SyncStateJSON
}
