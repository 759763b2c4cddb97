import ArgumentParser
import CommandLineSupport
import EventualKit
import Foundation
import Spending

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Online or offline, what waits to be sent or was refused (with ids), and the last sync.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let spending = try await global.spending()
        let status = try await spending.status()
        if output.json {
            struct Shape: Encodable {
                let connectivity: String; let pending, failed: Int; @JSONNullable var lastSyncAt: String?
                let firstSync: [FirstSyncJSON]; let attachmentsWaiting: AttachmentsWaitingJSON; let entries: [OutboxLineJSON]
            }
            print(try Terminal.json(Shape(connectivity: status.connectivity.rawValue, pending: status.pending, failed: status.failed,
                                          lastSyncAt: status.lastSyncAt.map(Timestamp.iso8601), firstSync: status.firstSync.map(FirstSyncJSON.init),
                                          attachmentsWaiting: AttachmentsWaitingJSON(status), entries: status.entries.map { OutboxLineJSON($0) })))
            return
        }
        print(DeviceWords.spendiq.report(status))
        if let signInAgain = DeviceWords.spendiq.signInAgain(spending.device) { Terminal.say(signInAgain) }
    }
}

struct Retry: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Send again what the server refused: a share, an invitation's answer, a receipt (its ID from spendiq failures; a record's change is settled with spendiq settle).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var entry: RefusedEntryArgument

    func run() async throws {
        let (line, outcome) = try await global.spending().device.retry(entry.id)
        Terminal.say(try DeviceWords.spendiq.retried(line.summary, outcome))
    }
}

struct Discard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Drop a change the server refused, for good (its ID from spendiq status).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var entry: RefusedEntryArgument

    func run() async throws {
        let line = try await global.spending().device.discard(entry.id)
        Terminal.say(DeviceWords.spendiq.droppedUpload(line) ?? "Dropped the refused change: \(line.summary).")
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Send what waits and fetch what changed elsewhere (your devices, shared ones), now.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let spending = try await global.spending()
        let uploads = Set(try spending.outbox.entries().filter { $0.operation == Attachments.uploadOperation && $0.state != .failed }.map(\.id))
        var report = try await FirstSyncBar.whileRunning(spending.engine, readyNote: "the last 30 days are in") {
            await spending.device.sync()
        }
        // NB: a share the server refused is moved back, and the move sent now: what it says is the second sync's.
        if await sayUndoneShares(spending) > 0 { report = await spending.device.sync() }
        let receipts = uploads.subtracting(try spending.outbox.entries().map(\.id)).count
        let done = "sent \(report.sent - report.duplicates) change(s)" + (receipts > 0 ? ", \(receipts) receipt(s)" : "")
            + " and \(max(0, report.calls - receipts)) other update(s), fetched \(report.pulled)"
        Terminal.say(try DeviceWords.spendiq.synced(report, done: done, outbox: spending.outbox))
    }
}
