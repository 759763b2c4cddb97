import CommandLineSupport
import ArgumentParser
import EventualAPI
import EventualKit
import Foundation
import Spending

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write every transaction to a CSV file (or - for standard output); spendiq import reads it back.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "The file to write, or - for standard output. An existing file needs --force; a device or folder is refused.") var csv: String
    @Flag(help: "Write over the file if it exists.") var force = false

    func run() async throws {
        let spending = try await global.spending()
        if csv == "-" {
            let (text, count) = try spending.csv.exportText()
            FileHandle.standardOutput.write(Data(text.utf8))
            // NB: said on stderr, so that the CSV on stdout stays whole for a pipe.
            Terminal.error("Exported \(count) transaction(s).")
            return
        }
        do {
            let count = try spending.csv.export(to: csv, overwrite: force)
            print("Exported \(count) transaction(s) to \(csv).")
        } catch SpendingError.exportExists(let path) {
            throw CLIError("\(path) already exists: add --force to write over it, or choose another name")
        }
    }
}

extension AmountText.DecimalSeparator: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument.lowercased() {
        case ".", "dot", "point": self = .dot
        case ",", "comma": self = .comma
        default: return nil
        }
    }
}

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import a SpendiQ export (as it was) or a bank's CSV export (date, amount, description) into an account; a re-import adds nothing twice.",
        discussion: "The decimal separator is read once from the file's amounts and said; when they never tell, give --decimal.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "The CSV file.") var csv: String
    @Option(help: "For a bank's export: the account its rows belong to (a SpendiQ export names its own).") var account: String?
    @Option(help: "Column names when the header differs: date=Fecha,amount=Importe,description=Concepto.") var map: String?
    @Option(help: "The file's decimal separator, . or , (default: read from its amounts).") var decimal: AmountText.DecimalSeparator?

    func run() async throws {
        var columns: [String: String] = [:]
        for pair in (map ?? "").split(separator: ",") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[1].isEmpty else { throw CLIError("--map takes NAME=COLUMN pairs separated by commas, e.g. date=Fecha,amount=Importe") }
            columns[parts[0].lowercased()] = parts[1]
        }
        let spending = try await global.spending()
        let summary: CSVImportSummary
        do {
            summary = try await spending.csv.importCSV(from: URL(fileURLWithPath: csv), account: account, map: columns, decimal: decimal)
        } catch let error as SpendingError {
            switch error {
            case .mixedDecimalSeparators, .undecidedDecimalSeparator: throw CLIError(error.description + ": give --decimal . or --decimal ,")
            default: throw error
            }
        }
        let kind = summary.format == .spendiq ? "a SpendiQ export" : "a bank's export"
        let separator = summary.decimalSeparator.map { ", amounts with \($0.name)" } ?? ", whole amounts"
        print("Read \(csv) as \(kind)\(separator).")
        if !summary.openedAccounts.isEmpty { print("Opened account(s) it names: \(summary.openedAccounts.joined(separator: ", ")).") }
        print("Imported \(summary.imported) transaction(s); \(summary.alreadyImported) already there; \(summary.skippedCount) skipped.")
        for line in summary.skipped { print("  skipped \(line)") }
        await finish(spending)
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Online or offline, what waits to be sent, and the last sync.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let status = try await global.spending().status()
        if output.json {
            struct Shape: Encodable { let connectivity: String; let pending, failed: Int; let lastSyncAt: String?; let entries: [OutboxLine] }
            print(try Terminal.json(Shape(connectivity: status.connectivity.rawValue, pending: status.pending, failed: status.failed,
                                          lastSyncAt: status.lastSyncAt.map(iso8601), entries: status.entries)))
            return
        }
        print(status.connectivity == .online ? Terminal.paint("online", .green) : Terminal.paint("offline", .yellow))
        print("pending \(status.pending), failed \(status.failed), last sync \(status.lastSyncAt.map(iso8601) ?? "never")")
        guard !status.entries.isEmpty else { return }
        var table = Table("STATE", "WHAT", "TRIES", "REASON")
        for entry in status.entries.prefix(50) {
            table.add(entry.state, entry.summary, "\(entry.attempts)", entry.lastError ?? "-")
        }
        print(table.render())
        if status.entries.count > 50 { print("… and \(status.entries.count - 50) more") }
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Send what waits and fetch your other devices' changes, now.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let spending = try await global.spending()
        let report = try await spending.sync()
        if let failure = report.failure {
            let delivered = report.sent - report.duplicates + report.calls
            throw CLIError("Sync stopped: \(failure.description)" + (delivered > 0 ? " (\(delivered) sent before)" : ""))
        }
        var line = "Synced: sent \(report.sent - report.duplicates) change(s) and \(report.calls) other update(s), fetched \(report.pulled)."
        if report.rejected > 0 { line += " \(report.rejected) refused by the server: see spendiq status." }
        print(line)
    }
}
