import ArgumentParser
import CommandLineSupport
import EventualAPI
import EventualKit
import Foundation
import Spending

/// SpendiQ's account and outbox subcommands: the command kit's, in SpendiQ's words.
extension SpendiqCommand: AppCommand {
    typealias User = UserSpending

    static var words: DeviceWords { .spendiq }

    static func app(_ options: GlobalOptions, creating: Bool) throws -> SpendingApp { try options.app(creating: creating) }

    static func open(_ options: GlobalOptions, network: Bool) async throws -> UserSpending { try await options.spending() }

    static var firstSyncReadyNote: String? { "the last 30 days are in" }

    static var joined: String { "its accounts are here (spendiq accounts)" }

    static func sync(_ user: UserSpending, progress: @escaping @Sendable (Int, Int) -> Void) async throws -> SyncReport {
        let report = await user.device.sync { remaining, total in progress(total - remaining, total) }
        // NB: a share the server refused is moved back, and the move sent now: what it says is the second sync's.
        return await sayUndoneShares(user) > 0 ? await user.device.sync() : report
    }

    static func sent(_ report: SyncReport) -> String {
        let receipts = report.callsByOperation[Attachments.uploadOperation] ?? 0
        return "sent \(report.sent - report.duplicates) change(s)" + (receipts > 0 ? ", \(receipts) receipt(s)" : "")
            + " and \(max(0, report.calls - receipts - report.upkeepCalls - report.visitsRecorded)) other update(s), fetched \(report.pulled)"
    }

    static func summary(of change: FailedChange, _ user: UserSpending) -> String { user.summary(of: change) }

    static func settleChoice(_ options: SpendiqSettleOptions, _ flag: SettleFlag, id: String, _ user: UserSpending?) throws -> SettleChoice {
        if options.account != nil, flag != .personal { throw CLIError("--account goes with --personal") }
        guard flag == .personal, let user else { return flag.choice }
        return .keepAsOwn(edits: try user.ownEdits(for: id, account: options.account))
    }

    static func settle(_ user: UserSpending, _ id: String, _ choice: SettleChoice) async throws -> Settlement {
        try await user.settle(id, choice)
    }
}

extension SpendiqCommand: AppWithAttachments {
    static var attachmentNoun: (command: String, noun: String, record: String) { ("receipt", "receipt", "transaction") }

    static func attachment(of id: String, _ user: UserSpending) throws -> RecordAttachment {
        let (transaction, receipt, space) = try user.ledger.receipt(of: id)
        let short = transaction.id.suffix(8)
        return RecordAttachment(title: "Receipt of \(transaction.money) on \(transaction.category ?? "other")", reference: receipt, space: space,
                                missing: "Transaction \(short) has no receipt (spendiq edit \(short) --receipt FILE adds one).")
    }
}

/// `settle`'s option of SpendiQ's own: the account a transaction kept as one's own goes to.
struct SpendiqSettleOptions: ParsableArguments {
    @Option(help: "With --personal: the account of yours a transaction goes to.") var account: String?
}

extension DeviceWords {
    /// SpendiQ's words for its outbox.
    static let spendiq = DeviceWords(command: "spendiq", entries: "changes", one: "change(s)", many: "change(s)",
                                     watch: "spendiq list --watch",
                                     quotaAdvice: "The pantry's items count too; in SpendiQ, `spendiq delete ID` frees a place at once")
}
