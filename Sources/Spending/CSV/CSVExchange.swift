import Crypto
import EventualAPI
import EventualKit
import Foundation
import GRDB

/// What an import did.
public struct CSVImportSummary: Sendable, Equatable, CustomStringConvertible {
    public var imported = 0
    /// Rows imported before (from this file or another device's import of it): not added again.
    public var alreadyImported = 0
    /// Rows that could not be read, with their line and why (the first few).
    public var skipped: [String] = []
    public var skippedCount = 0

    public var description: String {
        "imported \(imported), already there \(alreadyImported), skipped \(skippedCount)"
    }
}

/// Export of the ledger as CSV, and import of a bank's export (date, amount, description).
public struct CSVExchange: Sendable {
    let ledger: Ledger

    /// The columns of an export, in order.
    public static let exportColumns = ["id", "date", "account", "kind", "amount", "currency", "category", "note", "place", "automatic"]
    /// Header names tried for each column of a bank's export when `--map` does not say.
    public static let knownNames: [String: [String]] = [
        "date": ["date", "booking date", "transaction date", "fecha", "datum", "data", "valuta", "value date"],
        "amount": ["amount", "importe", "monto", "valor", "value", "betrag", "montant", "importo"],
        "description": ["description", "descripcion", "descripción", "concepto", "details", "memo", "payee", "text", "libellé", "libelle", "causale"],
    ]
    static let maxBytes = 64 * 1024 * 1024

    /// Writes every transaction, oldest first, to `url`; returns how many.
    @discardableResult
    public func export(to url: URL) throws -> Int {
        let calendar = ledger.configuration.calendar
        let accounts = Dictionary(uniqueKeysWithValues: try ledger.accounts(includeArchived: true).map { ($0.id, $0.name) })
        let transactions = try ledger.transactions().reversed()
        var text = Self.exportColumns.joined(separator: ",") + "\n"
        for transaction in transactions {
            let fields = [
                transaction.id, DateText.format(transaction.occurredAt, calendar: calendar).replacingOccurrences(of: " ", with: "T"),
                accounts[transaction.accountId] ?? transaction.accountId, transaction.kind.rawValue, transaction.money.amountText,
                transaction.currency, transaction.category ?? "", transaction.note ?? "", transaction.place ?? "", transaction.automatic ? "true" : "false",
            ]
            text += fields.map(CSVTable.escape).joined(separator: ",") + "\n"
        }
        do {
            try Data(text.utf8).write(to: url, options: .atomic)
        } catch {
            throw SpendingError.file("Cannot write \(url.path): \((error as NSError).localizedDescription)")
        }
        return transactions.count
    }

    /// Imports a bank's export into `account`: negative amounts are expenses, positive ones
    /// incomes, each marked `automatic`. `map` names the file's columns (`date`, `amount`,
    /// `description`) when its header uses other words. A row already imported (same account,
    /// date, amount, description and occurrence in the file) is not added again.
    public func importCSV(from url: URL, account reference: String, map: [String: String] = [:]) async throws -> CSVImportSummary {
        let account = try ledger.account(reference)
        let data: Data
        do {
            data = try Data(contentsOf: url, options: .mappedIfSafe)
        } catch {
            throw SpendingError.file("Cannot read \(url.path): \((error as NSError).localizedDescription)")
        }
        guard data.count <= Self.maxBytes else { throw SpendingError.file("\(url.path) is over 64 MiB: split it") }
        guard let text = String(data: data, encoding: .utf8) ?? String(data: data, encoding: .isoLatin1) else {
            throw SpendingError.file("\(url.path) is not text")
        }
        let table = try CSVTable(text: text)
        for key in map.keys where Self.knownNames[key] == nil {
            throw SpendingError.invalidField("--map knows date, amount and description, not '\(key)'")
        }
        var columns: [String: Int] = [:]
        for (name, guesses) in Self.knownNames {
            let wanted = map[name].map { [$0] } ?? guesses
            guard let index = table.column(wanted) else {
                if name == "description" { continue }
                throw SpendingError.file("\(url.path) has no \(name) column (header: \(table.header.joined(separator: ", ")).prefix(200)): name it with --map \(name)=COLUMN")
            }
            columns[name] = index
        }
        let calendar = ledger.configuration.calendar
        let now = ledger.now
        var summary = CSVImportSummary()
        var seen: [String: Int] = [:]
        var drafts: [SpendingTransaction] = []
        for row in table.rows {
            func field(_ name: String) -> String? {
                columns[name].flatMap { $0 < row.fields.count ? row.fields[$0].trimmingCharacters(in: .whitespaces) : nil }
            }
            do throws(SpendingError) {
                let signed = try AmountText.parseSigned(field("amount") ?? "", currency: account.currency)
                guard signed != 0 else { throw .invalidAmount("0") }
                let at = try DateText.parse(field("date") ?? "", now: now, calendar: calendar)
                let description = try Ledger.text(field("description").flatMap { $0.isEmpty ? nil : String($0.prefix(500)) },
                                                  field: "note", collection: SyncCollections.spendingTransactions)
                let identity = "\(account.id)|\(at)|\(signed)|\(description ?? "")"
                let occurrence = seen[identity, default: 0]
                seen[identity] = occurrence + 1
                let digest = SHA256.hash(data: Data("\(identity)|\(occurrence)".utf8)).map { String(format: "%02x", $0) }.joined()
                drafts.append(SpendingTransaction(
                    id: "imp-" + digest.prefix(32), accountId: account.id, kind: signed < 0 ? .expense : .income,
                    amountMinor: signed.magnitude > UInt64(Int64.max) ? Int64.max : Int64(signed.magnitude), currency: account.currency,
                    category: signed < 0 ? "other" : "income", note: description, occurredAt: at, place: nil, position: nil,
                    automatic: true, toAccountId: nil))
            } catch {
                summary.skippedCount += 1
                if summary.skipped.count < 5 { summary.skipped.append("line \(row.line): \(error.description)") }
            }
        }
        let rows = drafts
        let counts = try await ledger.store.write { tx -> (Int, Int) in
            var imported = 0, existing = 0
            for transaction in rows {
                if try Bool.fetchOne(tx.db, sql: "SELECT EXISTS (SELECT 1 FROM spending_transactions WHERE id = ?)", arguments: [transaction.id]) == true {
                    existing += 1
                    continue
                }
                try Ledger.insert(SpendingSchema.transactionsTable, transaction.id, transaction.syncFields, SyncCollections.spendingTransactions, tx)
                imported += 1
            }
            return (imported, existing)
        }
        summary.imported = counts.0
        summary.alreadyImported = counts.1
        return summary
    }
}
