import CommandLineSupport
import EventualAPI
import ArgumentParser
import EventualKit
import Foundation
import Pantry

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Online or offline, what waits to be sent, and the last sync.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let pantry = try await global.app().open()
        let status = try await pantry.status()
        if output.json {
            struct Shape: Encodable {
                let connectivity: String
                let pending: Int
                let failed: Int
                @JSONNullable var lastSyncAt: String?
                let signOutsWaiting: Int
                let mustSignInAgain: Bool
                let firstSync: [FirstSyncJSON]
                let attachmentsWaiting: AttachmentsWaitingJSON
                let entries: [OutboxLineJSON]
            }
            print(try ItemPrinting.json(Shape(connectivity: status.connectivity.rawValue, pending: status.pending,
                                              failed: status.failed, lastSyncAt: status.lastSyncAt.map(Timestamp.iso8601),
                                              signOutsWaiting: status.pendingRevocations, mustSignInAgain: DeviceWords.mustSignInAgain(pantry.device),
                                              firstSync: status.firstSync.map(FirstSyncJSON.init),
                                              attachmentsWaiting: AttachmentsWaitingJSON(status), entries: status.entries.map { OutboxLineJSON($0, recordKey: "itemId") })))
            return
        }
        print(DeviceWords.pantry.report(status, recordColumn: "ITEM"))
        if let signInAgain = DeviceWords.pantry.signInAgain(pantry.device) { Terminal.say(signInAgain) }
    }
}

struct Retry: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Send again what the server refused: a vote, a new product, a household call, a photo (its ID from pantry failures; an item's change is settled with pantry settle).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var entry: RefusedEntryArgument

    func run() async throws {
        let (line, outcome) = try await global.app().open().device.retry(entry.id)
        Terminal.say(try DeviceWords.pantry.retried(line.summary, outcome))
    }
}

struct Discard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Drop a change the server refused, for good (its ID from pantry status).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var entry: RefusedEntryArgument

    func run() async throws {
        let line = try await global.app().open().device.discard(entry.id)
        Terminal.say(DeviceWords.pantry.droppedUpload(line)
            ?? "Dropped the refused change: \(line.summary). This device shows the server's version from the next sync.")
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Send what waits and fetch what changed elsewhere (your devices, shared ones), now.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let pantry = try await global.app().open()
        let bar = ProgressBar(enabled: Terminal.stderrIsTTY)
        // NB: the report counts calls of every kind: a household's (a join, an invitation) is not a contribution.
        let householdCalls = Set(try pantry.outbox.entries().filter { $0.kind == .call && $0.operation.hasPrefix("spaces.") && $0.state != .failed }.map(\.id))
        let uploadCalls = Set(try pantry.outbox.entries().filter { $0.kind == .call && $0.operation == Attachments.uploadOperation && $0.state != .failed }.map(\.id))
        let report = try await FirstSyncBar.whileRunning(pantry.engine) {
            await pantry.device.sync { remaining, total in bar.show(done: total - remaining, total: total) }
        }
        bar.finish()
        let left = Set(try pantry.outbox.entries().map(\.id))
        let household = householdCalls.subtracting(left).count, photos = uploadCalls.subtracting(left).count
        let contributions = max(0, report.calls - household - photos)
        let done = "sent \(report.sent - report.duplicates) change(s) and \(contributions) knowledge-base contribution(s)"
            + (household > 0 ? ", \(household) household change(s)" : "") + (photos > 0 ? ", \(photos) photo(s)" : "")
            + ", fetched \(report.pulled)"
        Terminal.say(try DeviceWords.pantry.synced(report, done: done, outbox: pantry.outbox))
    }
}

/// A one-line bar on stderr, drawn only on a terminal and only when enough entries wait for it to matter.
final class ProgressBar: Sendable {
    let enabled: Bool
    static let threshold = 20

    init(enabled: Bool) { self.enabled = enabled }

    func show(done: Int, total: Int) {
        guard enabled, total >= Self.threshold else { return }
        let width = 30
        let filled = total == 0 ? width : min(width, done * width / total)
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        // NB: labelled as the first sync's bar is ("Fetching"): a bare bar says nothing of what moves.
        FileHandle.standardError.write(Data("\rSending [\(bar)] \(done)/\(total) waiting change(s)".utf8))
    }

    func finish() {
        if enabled { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
