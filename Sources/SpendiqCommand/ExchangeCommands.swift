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

    func validate() throws {
        try usageCheck { if csv.trimmingCharacters(in: .whitespaces).isEmpty { throw CLIError("--csv needs a file name, or - for standard output") } }
    }

    func run() async throws {
        let spending = try await global.spending()
        if csv == "-" {
            let (text, count) = try spending.csv.exportText()
            try StandardOutput.write(text)
            // NB: said on stderr, so that the CSV on stdout stays whole for a pipe.
            Terminal.error("Exported \(count) transaction(s).")
            return
        }
        do {
            let count = try spending.csv.export(to: csv, overwrite: force)
            Terminal.say("Exported \(count) transaction(s) to \(csv).")
        } catch SpendingError.exportExists(let path) {
            throw CLIError("\(path) already exists: add --force to write over it, or choose another name")
        }
    }
}

extension DateText.Order: ExpressibleByArgument {}

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
        discussion: """
            The decimal separator is read once from the file's amounts, and the order of day and month from its dates \
            (20/11/2026 is day first, 11/20/2026 month first), and both are said; when they never tell, give --decimal or --dates.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "The CSV file, or - for standard input.") var csv: String
    @Option(help: "For a bank's export: the account its rows belong to (a SpendiQ export names its own).") var account: String?
    @Option(help: "Column names when the header differs: date=Fecha,amount=Importe,description=Concepto.") var map: String?
    @Option(help: "The file's decimal separator, . or , (default: read from its amounts).") var decimal: AmountText.DecimalSeparator?
    @Option(help: "The order of its dates: dmy (20/11/2026), mdy (11/20/2026) or ymd (default: read from its dates).") var dates: DateText.Order?

    func validate() throws {
        try usageCheck { if csv.trimmingCharacters(in: .whitespaces).isEmpty { throw CLIError("--csv needs a file name, or - for standard input") } }
    }

    func run() async throws {
        var columns: [String: String] = [:]
        for pair in (map ?? "").split(separator: ",") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[1].isEmpty else { throw CLIError("--map takes NAME=COLUMN pairs separated by commas, e.g. date=Fecha,amount=Importe") }
            columns[parts[0].lowercased()] = parts[1]
        }
        let spending = try await global.spending()
        let summary = if csv == "-" {
            try await spending.csv.importCSV(data: try FileHandle.standardInput.readToEnd() ?? Data(), name: "standard input",
                                             account: account, map: columns, decimal: decimal, dates: dates)
        } else {
            try await spending.csv.importCSV(from: URL(fileURLWithPath: csv), account: account, map: columns, decimal: decimal, dates: dates)
        }
        let kind = summary.format == .spendiq ? "a SpendiQ export" : "a bank's export"
        let separator = summary.decimalSeparator.map { ", amounts with \($0.name)" } ?? ", whole amounts"
        let order = summary.dateOrder.map { ", dates \($0.name)" } ?? ""
        // NB: a file of which no row could be read imported nothing: that is no success.
        if summary.imported == 0, summary.alreadyImported == 0, summary.skippedCount > 0 {
            let first = summary.skipped.first.map { " (\($0))" } ?? ""
            let hint = decimal != nil || dates != nil ? ": are --decimal and --dates right?" : ""
            throw CLIError("Imported nothing: none of the \(summary.skippedCount) row(s) of \(csv == "-" ? "standard input" : csv) could be read\(first)\(hint)")
        }
        Terminal.say("Read \(csv == "-" ? "standard input" : csv) as \(kind)\(separator)\(order).")
        if !summary.openedAccounts.isEmpty { Terminal.say("Opened account(s) it names: \(summary.openedAccounts.joined(separator: ", ")).") }
        Terminal.say("Imported \(summary.imported) transaction(s); \(summary.alreadyImported) already there; \(summary.skippedCount) skipped.")
        for line in summary.skipped { Terminal.say("  skipped \(line)") }
        await finish(spending)
    }
}
