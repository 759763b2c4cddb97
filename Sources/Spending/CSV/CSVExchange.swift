import Crypto
import EventualAPI
import EventualKit
import Foundation
import GRDB

/// What an import did.
public struct CSVImportSummary: Sendable, Equatable, CustomStringConvertible {
    /// A SpendiQ export (each row names its account and kind) or a bank's (date, amount, description).
    public enum Format: String, Sendable { case spendiq, bank }

    public var format: Format = .bank
    /// The file's decimal separator, read once from its amounts; nil when they are whole numbers.
    public var decimalSeparator: AmountText.DecimalSeparator?
    /// The order of a bank file's dates, read once from them (or given); nil when no date needed it.
    public var dateOrder: DateText.Order?
    public var imported = 0
    /// Rows imported before (from this file or another device's import of it): not added again.
    public var alreadyImported = 0
    /// Rows that could not be read, with their line and why (the first few).
    public var skipped: [String] = []
    public var skippedCount = 0
    /// Accounts a SpendiQ export named that did not exist here, opened by the import.
    public var openedAccounts: [String] = []

    public var description: String {
        "imported \(imported), already there \(alreadyImported), skipped \(skippedCount)"
    }
}

/// Export of the ledger as CSV, and import of that export or of a bank's (date, amount, description).
public struct CSVExchange: Sendable {
    let ledger: Ledger

    /// The columns of an export, in order.
    public static let exportColumns = ["id", "date", "account", "kind", "amount", "currency", "category", "note", "place", "automatic",
                                       "to_account", "latitude", "longitude"]
    /// Header names tried for each column of a bank's export when `--map` does not say.
    public static let knownNames: [String: [String]] = [
        "date": ["date", "booking date", "transaction date", "fecha", "datum", "data", "valuta", "value date"],
        "amount": ["amount", "importe", "monto", "valor", "value", "betrag", "montant", "importo"],
        "description": ["description", "descripcion", "descripción", "concepto", "details", "memo", "payee", "text", "libellé", "libelle", "causale"],
    ]
    static let maxBytes = 64 * 1024 * 1024

    /// Every transaction, oldest first, as CSV text, and how many.
    public func exportText() throws -> (text: String, count: Int) {
        let accounts = Dictionary(uniqueKeysWithValues: try ledger.accounts(includeArchived: true).map { ($0.id, $0.name) })
        let transactions = try ledger.transactions().reversed()
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        dates.timeZone = ledger.configuration.calendar.timeZone
        var text = Self.exportColumns.joined(separator: ",") + "\n"
        for transaction in transactions {
            let texts = [
                transaction.id, dates.string(from: Date(timeIntervalSince1970: Double(transaction.occurredAt) / 1000)),
                accounts[transaction.accountId] ?? transaction.accountId, transaction.kind.rawValue, transaction.money.amountText,
                transaction.currency, transaction.category ?? "", transaction.note ?? "", transaction.place ?? "",
                transaction.automatic ? "true" : "false", transaction.toAccountId.map { accounts[$0] ?? $0 } ?? "",
            ].map(CSVTable.escape)
            let numbers = [transaction.latitude, transaction.longitude].map { $0.map { "\($0)" } ?? "" }
            text += (texts + numbers).joined(separator: ",") + "\n"
        }
        return (text, transactions.count)
    }

    /// Writes every transaction to `path`: a new file, or an existing regular one when
    /// `overwrite` (through a symbolic link to its target); never a device, folder or pipe.
    @discardableResult
    public func export(to path: String, overwrite: Bool = false) throws -> Int {
        let (text, count) = try exportText()
        try ExportFile.write(Data(text.utf8), to: path, overwrite: overwrite)
        return count
    }

    /// Imports a CSV file. A SpendiQ export (its header names `id`, `kind`, `account`...) comes
    /// back as it was: kinds, categories, notes, places, positions and transfer targets, each row
    /// into the account it names (opened when missing); `account` must then be nil. A bank's
    /// export goes into `account`: negative amounts are expenses, positive ones incomes, each
    /// marked `automatic`; `map` names its columns (`date`, `amount`, `description`) when its
    /// header uses other words. The decimal separator is read once for the whole file (or
    /// given as `decimal`). A row already imported is not added again.
    public func importCSV(from url: URL, account reference: String?, map: [String: String] = [:],
                          decimal: AmountText.DecimalSeparator? = nil, dates: DateText.Order? = nil) async throws -> CSVImportSummary {
        try await importCSV(Self.read(url), name: url.path, account: reference, map: map, decimal: decimal, dates: dates)
    }

    /// Imports CSV text read elsewhere (standard input), named `name` in messages; as `importCSV(from:)`.
    public func importCSV(data: Data, name: String, account reference: String?, map: [String: String] = [:],
                          decimal: AmountText.DecimalSeparator? = nil, dates: DateText.Order? = nil) async throws -> CSVImportSummary {
        guard data.count <= Self.maxBytes else { throw SpendingError.file("\(name) is over 64 MiB: split it") }
        return try await importCSV(Self.table(data, name: name), name: name, account: reference, map: map, decimal: decimal, dates: dates)
    }

    private func importCSV(_ table: CSVTable, name: String, account reference: String?, map: [String: String],
                           decimal: AmountText.DecimalSeparator?, dates: DateText.Order?) async throws -> CSVImportSummary {
        for key in map.keys where Self.knownNames[key] == nil {
            throw SpendingError.unknownColumn(key)
        }
        if let export = SpendiqExport(table) {
            guard reference == nil else {
                throw SpendingError.invalidField("This file is a SpendiQ export: each row names its account, so import it without choosing one")
            }
            return try await importExport(table, export, decimal: decimal)
        }
        guard let reference else { throw SpendingError.whichAccount(ofFile: true) }
        let account = try ledger.account(reference)
        try ledger.checkWritable(account)
        return try await importBank(table, name: name, account: account, map: map, decimal: decimal, dates: dates)
    }

    private static func read(_ url: URL) throws -> CSVTable {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            throw SpendingError.file("Cannot read \(url.path): there is no such file")
        }
        guard !isFolder.boolValue else { throw SpendingError.file("\(url.path) is a folder, not a CSV file") }
        let data: Data
        do {
            data = try Data(contentsOf: url, options: .mappedIfSafe)
        } catch {
            throw SpendingError.file("Cannot read \(url.path): \(FileManager.default.isReadableFile(atPath: url.path) ? "it cannot be read" : "permission denied")")
        }
        guard data.count <= maxBytes else { throw SpendingError.file("\(url.path) is over 64 MiB: split it") }
        return try table(data, name: url.path)
    }

    private static func table(_ data: Data, name: String) throws -> CSVTable {
        // NB: Latin-1 reads any bytes; a NUL or other control bytes say it is no text at all.
        let controls = data.prefix(4096).filter { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }.count
        guard !data.contains(0), controls == 0, let text = String(data: data, encoding: .utf8) ?? String(data: data, encoding: .isoLatin1) else {
            throw SpendingError.file("\(name) is not a text (CSV) file")
        }
        return try CSVTable(text: text)
    }

    /// The file's decimal separator: given, or read from its amounts; refused when the amounts
    /// never say and one of them reads two ways.
    private static func decimal(of amounts: [String], currency: String, given: AmountText.DecimalSeparator?) throws(SpendingError)
        -> AmountText.DecimalSeparator? {
        if let given { return given }
        if let found = try AmountText.decimalSeparator(of: amounts, currency: currency) { return found }
        for amount in amounts {
            do { _ = try AmountText.parseSigned(amount, currency: currency) } catch {
                if case .ambiguousAmount = error { throw .undecidedDecimalSeparator(example: amount) }
            }
        }
        return nil
    }

    /// The order of a file's dates: given, or read from the dates only one order makes a date of
    /// ("20/11/2026" is day first); refused when they disagree, or never tell and one reads two ways.
    private static func dateOrder(of dates: [String], given: DateText.Order?) throws(SpendingError) -> DateText.Order? {
        if let given { return given }
        var dayFirst: String?, monthFirst: String?, undecided: String?
        for text in dates {
            let head = String(text.prefix { $0 != " " && $0 != "T" })
            guard !head.contains("-") else { continue }
            let parts = head.split(separator: head.contains("/") ? "/" : ".", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].count <= 2, let a = Int(parts[0]), let b = Int(parts[1]) else { continue }
            if a > 12, b <= 12 {
                dayFirst = dayFirst ?? text
            } else if b > 12, a <= 12 {
                monthFirst = monthFirst ?? text
            } else if a != b {
                undecided = undecided ?? text
            }
        }
        if let dayFirst, let monthFirst { throw .mixedDateOrders(dayFirst: dayFirst, monthFirst: monthFirst) }
        if dayFirst != nil { return .dmy }
        if monthFirst != nil { return .mdy }
        if let undecided { throw .undecidedDateOrder(example: undecided) }
        return nil
    }

    /// Why a bank file's row was skipped, in the file's terms (a negative amount is money out there).
    private static func reason(_ error: SpendingError, decimal: AmountText.DecimalSeparator?) -> String {
        switch error {
        case .invalidAmount(let text) where text == "0": return "an amount of 0 moves no money"
        case .invalidAmount(let text): return "'\(text)' is not an amount" + (decimal.map { " with \($0.name)" } ?? "")
        case .invalidDate(let text), .dateOutOfRange(let text): return "'\(text)' is not a date from 1970 to tomorrow"
        default: return error.description
        }
    }

    private func importBank(_ table: CSVTable, name: String, account: SpendingAccount, map: [String: String],
                            decimal given: AmountText.DecimalSeparator?, dates: DateText.Order?) async throws -> CSVImportSummary {
        var columns: [String: Int] = [:]
        for (column, guesses) in Self.knownNames {
            let wanted = map[column].map { [$0] } ?? guesses
            guard let index = table.column(wanted) else {
                if column == "description" { continue }
                throw SpendingError.missingColumn(file: name, column: column, header: String(table.header.joined(separator: ", ").unicodeScalars.filter { $0.properties.generalCategory != .control }.prefix(200)))
            }
            columns[column] = index
        }
        let calendar = ledger.configuration.calendar
        let now = ledger.now
        var summary = CSVImportSummary(format: .bank)
        summary.decimalSeparator = try Self.decimal(of: table.rows.compactMap { table.field(columns["amount"], of: $0) },
                                                    currency: account.currency, given: given)
        summary.dateOrder = try Self.dateOrder(of: table.rows.compactMap { table.field(columns["date"], of: $0) }, given: dates)
        var seen: [String: Int] = [:]
        var drafts: [SpendingTransaction] = []
        for row in table.rows {
            do throws(SpendingError) {
                let signed = try AmountText.parseSigned(table.field(columns["amount"], of: row) ?? "", currency: account.currency,
                                                        decimal: summary.decimalSeparator)
                guard signed != 0 else { throw .invalidAmount("0") }
                let at = try DateText.parse(table.field(columns["date"], of: row) ?? "", now: now, calendar: calendar, order: summary.dateOrder)
                let description = try Ledger.text(table.field(columns["description"], of: row).flatMap { $0.isEmpty ? nil : String($0.prefix(500)) },
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
                summary.skip(line: row.line, Self.reason(error, decimal: summary.decimalSeparator))
            }
        }
        try await insert(drafts, into: &summary)
        return summary
    }

    private func importExport(_ table: CSVTable, _ export: SpendiqExport, decimal given: AmountText.DecimalSeparator?) async throws -> CSVImportSummary {
        var summary = CSVImportSummary(format: .spendiq)
        let currencies = Set(table.rows.compactMap { table.field(export.currency, of: $0)?.uppercased() })
        // NB: the export writes amounts with a decimal point; a spreadsheet may have saved them with a comma.
        summary.decimalSeparator = try Self.decimal(of: table.rows.compactMap { table.field(export.amount, of: $0) },
                                                    currency: currencies.count == 1 ? currencies.first! : "EUR", given: given)
        var accounts: [String: SpendingAccount] = [:]
        func account(_ name: String, currency: String) async throws -> SpendingAccount {
            if let known = accounts[name.lowercased()] { return known }
            let found: SpendingAccount
            do {
                found = try ledger.account(name, allowArchived: true)
            } catch SpendingError.noSuchAccount {
                found = try await ledger.addAccount(name: name, currency: currency)
                summary.openedAccounts.append(found.name)
            }
            accounts[name.lowercased()] = found
            return found
        }
        var drafts: [SpendingTransaction] = []
        for row in table.rows {
            do {
                drafts.append(try await export.transaction(row, in: table, decimal: summary.decimalSeparator, ledger: ledger, account: account))
            } catch let error as SpendingError {
                // NB: one's own export holds the rows of the accounts one only views: read back in,
                // they are here already, as the guide promises of a re-import, not errors.
                if case .viewerOf = error, let id = table.field(export.id, of: row).map(CSVTable.unescape), try isHere(id) {
                    summary.alreadyImported += 1
                    continue
                }
                summary.skip(line: row.line, Self.reason(error, decimal: summary.decimalSeparator))
            }
        }
        try await insert(drafts, into: &summary)
        return summary
    }

    /// Whether a transaction with this id is on the device already.
    private func isHere(_ id: String) throws -> Bool {
        try ledger.store.reader.read { db in try Self.isHere(id, db) }
    }

    private static func isHere(_ id: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM spending_transactions WHERE id = ?)", arguments: [id]) ?? false
    }

    private func insert(_ drafts: [SpendingTransaction], into summary: inout CSVImportSummary) async throws {
        let counts = try await ledger.store.write { tx -> (Int, Int) in
            var imported = 0, existing = 0
            for transaction in drafts {
                if try Self.isHere(transaction.id, tx.db) {
                    existing += 1
                    continue
                }
                try Ledger.insert(transaction, in: tx)
                imported += 1
            }
            return (imported, existing)
        }
        summary.imported = counts.0
        summary.alreadyImported += counts.1
    }
}

extension CSVImportSummary {
    mutating func skip(line: Int, _ reason: String) {
        skippedCount += 1
        if skipped.count < 5 { skipped.append("line \(line): \(reason)") }
    }
}

extension CSVTable {
    /// A row's field in `column`, trimmed; nil when the row is shorter.
    func field(_ column: Int?, of row: (line: Int, fields: [String])) -> String? {
        column.flatMap { $0 < row.fields.count ? row.fields[$0].trimmingCharacters(in: .whitespaces) : nil }
    }
}

/// The columns of a file SpendiQ exported (found by name, so a spreadsheet may reorder them).
struct SpendiqExport {
    let id: Int, date: Int, account: Int, kind: Int, amount: Int, currency: Int
    let category: Int?, note: Int?, place: Int?, automatic: Int?, toAccount: Int?, latitude: Int?, longitude: Int?

    init?(_ table: CSVTable) {
        guard let id = table.column(["id"]), let date = table.column(["date"]), let account = table.column(["account"]),
              let kind = table.column(["kind"]), let amount = table.column(["amount"]), let currency = table.column(["currency"]) else { return nil }
        (self.id, self.date, self.account, self.kind, self.amount, self.currency) = (id, date, account, kind, amount, currency)
        category = table.column(["category"])
        note = table.column(["note"])
        place = table.column(["place"])
        automatic = table.column(["automatic"])
        toAccount = table.column(["to_account"])
        latitude = table.column(["latitude"])
        longitude = table.column(["longitude"])
    }

    /// The transaction a row holds, as it was exported.
    func transaction(_ row: (line: Int, fields: [String]), in table: CSVTable, decimal: AmountText.DecimalSeparator?, ledger: Ledger,
                     account: (String, String) async throws -> SpendingAccount) async throws -> SpendingTransaction {
        func text(_ column: Int?) -> String? {
            guard let value = table.field(column, of: row).map(CSVTable.unescape), !value.isEmpty else { return nil }
            return value
        }
        guard let id = text(self.id), id.count <= 128, !id.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { throw SpendingError.invalidField("the id is missing or too long") }
        guard let kind = text(self.kind).flatMap({ TransactionKind(rawValue: $0.lowercased()) }) else {
            throw SpendingError.invalidField("the kind is not expense, income or transfer")
        }
        let currency = (text(self.currency) ?? "").uppercased()
        guard Currency.isCode(currency) else { throw SpendingError.invalidCurrency(currency) }
        guard let name = text(self.account) else { throw SpendingError.invalidField("the account is missing") }
        let owner = try await account(name, currency)
        try ledger.checkWritable(owner)
        guard owner.currency == currency else {
            throw SpendingError.invalidField("the row is in \(currency) but the account \(owner.name) holds \(owner.currency)")
        }
        var target: SpendingAccount?
        if kind == .transfer {
            guard let name = text(toAccount) else { throw SpendingError.invalidField("the transfer has no to_account") }
            target = try await account(name, currency)
            guard target!.currency == currency, target!.id != owner.id else { throw SpendingError.transferCurrencies(from: currency, to: target!.currency) }
        }
        let amount = try AmountText.parse(text(self.amount) ?? "", currency: currency, decimal: decimal)
        let occurredAt = try Self.date(text(date) ?? "", ledger: ledger)
        var position: GeoPosition?
        if let latitude = text(latitude), let longitude = text(longitude) {
            position = try GeoPosition(parsing: "\(latitude),\(longitude)", orThrow: SpendingError.invalidCoordinates)
        }
        let transactions = SyncCollections.spendingTransactions
        return SpendingTransaction(
            id: id, accountId: owner.id, kind: kind, amountMinor: amount, currency: currency,
            category: try ledger.category(text(category), default: kind == .income ? "income" : kind == .transfer ? "transfer" : "other"),
            note: try Ledger.text(text(note), field: "note", collection: transactions), occurredAt: occurredAt,
            place: try Ledger.text(text(place), field: "place", collection: transactions), position: position,
            automatic: text(automatic)?.lowercased() == "true", toAccountId: target?.id)
    }

    /// The export's `2026-11-20T14:30:05.120+01:00`, or a date as people type it.
    static func date(_ text: String, ledger: Ledger) throws(SpendingError) -> Int64 {
        let dates = ISO8601DateFormatter()
        for options: ISO8601DateFormatter.Options in [[.withInternetDateTime, .withFractionalSeconds], [.withInternetDateTime]] {
            dates.formatOptions = options
            if let date = dates.date(from: text) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        }
        return try DateText.parse(text, now: ledger.now, calendar: ledger.configuration.calendar)
    }
}
