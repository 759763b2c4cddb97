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
    @Flag(help: "Keep the list on screen, printed again when it changes (a sync from another device too), until Ctrl-C.") var watch = false
    @Option(parsing: .unconditional, help: "With --watch: seconds between syncs, 1 to 3600 (default 5).") var every: Int = 5

    func validate() throws {
        try usageCheck {
            if let days, !(1...36_600).contains(days) { throw CLIError("--days must be from 1 to 36600, not \(days)") }
            if !(1...3600).contains(every) { throw CLIError("--every must be from 1 to 3600 seconds, not \(every)") }
        }
    }

    func run() async throws {
        let spending = try await global.spending()
        let query = TransactionQuery(days: days, account: account, category: category)
        guard watch else {
            let transactions = try spending.ledger.transactions(query)
            print(try Self.render(transactions, states: try spending.syncStates(of: transactions), of: spending, json: output.json))
            return
        }
        let snapshots = try spending.watchTransactions(query)
        let (json, every) = (output.json, every)
        try await Interruption.untilSignalled {
            // NB: the list changes when a sync brings another device's changes: this process syncs
            // itself, as a phone's app does while its screen is open.
            let syncing = Task {
                while !Task.isCancelled {
                    await spending.trySync()
                    try? await Task.sleep(for: .seconds(every))
                }
            }
            defer { syncing.cancel() }
            var shown: String?
            for try await snapshot in snapshots {
                let states = Dictionary(snapshot.rows.map { ($0.row.id, $0.state) }, uniquingKeysWith: { first, _ in first })
                let text = try Self.render(snapshot.rows.map(\.row), states: states, of: spending, json: json, oneLine: json)
                // NB: an account's change that shows nothing new (its balance is not listed) prints nothing.
                guard text != shown else { continue }
                shown = text
                // NB: on a terminal the list replaces the last one; piped, each follows the last after a blank line.
                print(json ? text : (Terminal.stdoutIsTTY ? "\u{1B}[H\u{1B}[2J" + text : text + "\n"))
                // NB: at once, not when a piped buffer fills: a script reads each list as it comes.
                fflush(nil)
            }
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
                TransactionJSON(id: $0.id, account: names[$0.accountId] ?? $0.accountId, kind: $0.kind.rawValue, amountMinor: $0.amountMinor,
                                currency: $0.currency, category: $0.category, note: $0.note, date: Timestamp.iso8601($0.occurredAt),
                                toAccount: $0.toAccountId.map { names[$0] ?? $0 }, place: $0.place, automatic: $0.automatic,
                                space: $0.space.map { spaces[$0] ?? $0 }, recordedBy: $0.changedBy ?? me,
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
            let account = (names[transaction.accountId] ?? "?") + (transaction.toAccountId.map { " → " + (names[$0] ?? "?") } ?? "")
            let by = transaction.changedBy.map { $0 == me ? "you" : $0 } ?? "you"
            let cells = [String(transaction.id.suffix(8)), DateText.format(transaction.occurredAt, calendar: calendar), account,
                         sign + transaction.money.description, transaction.category ?? "-",
                         (transaction.note ?? "").replacingOccurrences(of: "\n", with: " ") + (transaction.automatic ? " [imported]" : "")]
                .map { Table.Cell($0) } + (shared ? [Table.Cell(by)] : [])
            table.rows.append((marked ? [Table.Cell(mark.rawValue, mark == .refused ? .red : .yellow)] : []) + cells)
        }
        guard marked else { return table.render() }
        var legend: [String] = []
        if marks.contains(.waiting) { legend.append("\(SyncMark.waiting.rawValue) waits to be sent") }
        if marks.contains(.refused) { legend.append("\(SyncMark.refused.rawValue) refused by the server: spendiq failures") }
        return table.render() + "\n" + Terminal.wrap(legend.joined(separator: "; "))
    }
}

/// The mark a list puts before a row that is not confirmed.
enum SyncMark: String {
    case none = " "
    case waiting = "⋯"
    case refused = "!"

    init(_ state: SyncState) {
        switch state {
        case .confirmed: self = .none
        case .pending: self = .waiting
        case .failed: self = .refused
        }
    }
}

/// A row's sync state in `--json`: `{"state":"confirmed"}`, `{"state":"pending","count":1}`, `{"state":"failed","reason":"…"}`.
struct SyncStateJSON: Encodable {
    let state: SyncState

    init(_ state: SyncState) { self.state = state }

    enum CodingKeys: String, CodingKey { case state, count, reason }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch state {
        case .confirmed: try container.encode("confirmed", forKey: .state)
        case .pending(let count):
            try container.encode("pending", forKey: .state)
            try container.encode(count, forKey: .count)
        case .failed(let reason):
            try container.encode("failed", forKey: .state)
            try container.encode(reason, forKey: .reason)
        }
    }
}

/// A transaction in `--json`: every key always present (null when empty), so a script reading `note` finds it.
struct TransactionJSON: Encodable {
    let id, account, kind: String; let amountMinor: Int64; let currency: String; let category, note: String?; let date: String
    let toAccount, place: String?; let automatic: Bool; let space: String?; let recordedBy: String; let syncState: SyncStateJSON

    enum CodingKeys: String, CodingKey {
        case id, account, kind, amountMinor, currency, category, note, date, toAccount, place, automatic, space, recordedBy, syncState
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(account, forKey: .account)
        try container.encode(kind, forKey: .kind)
        try container.encode(amountMinor, forKey: .amountMinor)
        try container.encode(currency, forKey: .currency)
        try container.encode(category, forKey: .category)
        try container.encode(note, forKey: .note)
        try container.encode(date, forKey: .date)
        try container.encode(toAccount, forKey: .toAccount)
        try container.encode(place, forKey: .place)
        try container.encode(automatic, forKey: .automatic)
        try container.encode(space, forKey: .space)
        try container.encode(recordedBy, forKey: .recordedBy)
        try container.encode(syncState, forKey: .syncState)
    }
}
