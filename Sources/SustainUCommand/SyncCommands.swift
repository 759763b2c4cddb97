import ArgumentParser
import CommandLineSupport
import EventualAPI
import EventualKit
import Foundation
import Recycling

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Online or offline, what works offline, and what waits to be sent.",
                                                    usage: "sustainu status [--json]")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let recycling = try await global.open()
        let status = try await recycling.status()
        let device = status.device
        let online = device.connectivity == .online
        if output.json {
            struct Shape: Encodable {
                let connectivity: String, pending: Int, failed: Int, waitingScans: Int
                @JSONNullable var pointsSavedAt: String?
                @JSONNullable var lastSyncAt: String?
                let packagingEntries: Int, signOutsWaiting: Int, mustSignInAgain: Bool
                let unavailableOffline: [String]
                let entries: [OutboxLineJSON]
            }
            print(try Terminal.json(Shape(
                connectivity: device.connectivity.rawValue, pending: device.pending, failed: device.failed, waitingScans: status.waitingScans,
                pointsSavedAt: status.pointsSavedAt.map(Timestamp.iso8601),
                lastSyncAt: device.lastSyncAt.map(Timestamp.iso8601),
                packagingEntries: status.packagingEntries, signOutsWaiting: device.pendingRevocations,
                mustSignInAgain: DeviceWords.mustSignInAgain(recycling.device),
                unavailableOffline: online ? [] : RecyclingStatus.onlineOnly,
                entries: device.entries.map { OutboxLineJSON($0) })))
        } else {
            if online {
                print(Terminal.paint("● Online", .green))
            } else {
                let banner = recycling.serverSilent ? "● The server is not answering" : "● No internet connection"
                say(Terminal.paint(banner, .yellow) + ": scans and visits are saved and sent later.")
                say("Unavailable until you are back online: " + RecyclingStatus.onlineOnly.joined(separator: "; ") + ".")
            }
            say("points saved: " + (status.pointsSavedAt.map { age($0) } ?? "not yet (connect once to load them)")
                  + " · barcodes known offline: \(status.packagingEntries)")
            say("waiting: \(device.pending) (\(status.waitingScans) scan\(status.waitingScans == 1 ? "" : "s")), failed: \(device.failed), "
                  + LastSync.phrase(device.lastSyncAt) + (device.pendingRevocations > 0 ? " · a sign-out waits to reach the server" : ""))
            if let ahead = recycling.clockAheadBySeconds() { say(Terminal.clockSentence(aheadBySeconds: ahead)) }
            if let signInAgain = DeviceWords.sustainu.signInAgain(recycling.device) { say(signInAgain) }
            if !device.entries.isEmpty {
                print(DeviceWords.sustainu.table(device.entries))
            }
            if device.failed > 0 { say(DeviceWords.sustainu.refused(in: device)) }
        }
        await announceClassified(recycling, json: output.json)
    }
}

struct Retry: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Send a scan or visit the server refused again (its ID from sustainu status).",
                                                    usage: "sustainu retry ID")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var entry: RefusedEntryArgument

    func run() async throws { try await Self.retry(entry.id, global) }

    /// Sends the refused entry `id` again, and says what came of it.
    static func retry(_ id: String, _ global: GlobalOptions) async throws {
        let (line, outcome) = try await OutboxWords.speak { try await global.app().open().retry(id) }
        let summary = line.summary
        switch outcome {
        case .refused(let reason): throw DeviceWords.sustainu.refusedAgain(summary, reason: reason)
        case .waiting: say("The \(summary) will be sent again with the next sync.")
        case .sent: say("Sent the \(summary) again: the server took it (sustainu scans shows the result).")
        }
    }
}

struct Discard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Drop a scan or visit the server refused, for good (its ID from sustainu status).",
                                                    usage: "sustainu discard ID")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var entry: RefusedEntryArgument

    func run() async throws { try await Self.discard(entry.id, global) }

    /// Drops the refused entry `id`, and says so.
    static func discard(_ id: String, _ global: GlobalOptions) async throws {
        let line = try await OutboxWords.speak { try await global.app().open().discard(id) }
        say("Dropped the refused \(line.summary).")
    }
}

struct Failures: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The scans and visits the server refused, with its reasons: settle each with sustainu settle ID.",
        usage: "sustainu failures [--json]", discussion: "Example: sustainu failures --json")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let failures = try await global.open(network: false).failures()
        if output.json {
            struct Shape: Encodable { let id, shortId, what: String; @JSONNullable var reason: String?; let attempts: Int }
            print(try Terminal.json(failures.map { Shape(id: $0.id, shortId: $0.shortID, what: $0.summary, reason: $0.lastError, attempts: $0.attempts) }))
            return
        }
        guard !failures.isEmpty else { print("Nothing was refused."); return }
        var table = Table("ID", "WHAT", "REASON")
        table.whole = ["ID"]
        for failure in failures { table.add(failure.shortID, failure.summary, failure.lastError ?? "-") }
        print(table.render())
        say("Settle each: sustainu settle ID --keep-mine (send it again) or --discard (drop it).")
    }
}

struct Settle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Settle a refused scan or visit: send yours again (--keep-mine) or drop it (--discard).",
        usage: "sustainu settle ID --keep-mine | --discard",
        discussion: "A scan or a visit has no server version to take: --take-theirs is for records (pantry, spendiq).\nExample: sustainu settle 1a2b3c4d --keep-mine")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var entry: RefusedEntryArgument
    @Flag(help: "Send it again.") var keepMine = false
    @Flag(help: "Not for scans and visits: the server keeps no version of them.") var takeTheirs = false
    @Flag(help: "Drop it, for good.") var discard = false

    func validate() throws {
        try usageCheck {
            if [keepMine, takeTheirs, discard].filter({ $0 }).count != 1 { throw CLIError("Give exactly one of --keep-mine or --discard") }
            if takeTheirs { throw CLIError("A scan or a visit has no server version to take: --keep-mine sends it again, --discard drops it") }
        }
    }

    func run() async throws {
        if keepMine { try await Retry.retry(entry.id, global) } else { try await Discard.discard(entry.id, global) }
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Send waiting scans and visits now, and refresh the saved points and barcodes.",
                                                    usage: "sustainu sync")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let recycling = try await global.app().open()
        // NB: a photo's upload is a call too, not a scan or a visit: counted apart.
        let uploads = Set(try recycling.outbox.entries().filter { $0.operation == Attachments.uploadOperation && $0.state != .failed }.map(\.id))
        var report = try await recycling.sync()
        if let failure = report.failure { throw DeviceWords.sustainu.stopped(failure, sentBefore: report.calls) }
        let refused = try recycling.outbox.entries(state: .failed)
        let left = try recycling.outbox.entries()
        let refusedUploads = Set(left.filter { $0.state == .failed }.map(\.id)).intersection(uploads).count
        let sentUploads = uploads.subtracting(left.map(\.id)).count
        report.calls = max(0, report.calls - sentUploads)
        report.rejected = max(0, report.rejected - refusedUploads)
        let clock = recycling.clockAheadBySeconds().map { " " + Terminal.clockSentence(aheadBySeconds: $0) } ?? ""
        if report.clockRefused > 0 {
            throw CLIError("\(count(report.clockRefused, "scan or visit waits", "scans or visits wait")): the server refused its time.\(clock)")
        }
        let sent = report.calls + report.rejected
        // NB: "Synced" only when nothing is left refused: a refusal is not a success.
        guard refused.isEmpty else {
            if sent > 0 {
                say("Sent \(count(sent, "scan or visit", "scans or visits"))" + (report.rejected > 0 ? ": the server took \(report.calls) and refused \(report.rejected)." : "."))
            }
            await announceClassified(recycling, json: false)
            // NB: a refused photo refuses its scan, which says why: the scan is what the student settles.
            let scans = refused.filter { $0.operation != Attachments.uploadOperation }
            let told = scans.isEmpty ? refused : scans
            let settling = DeviceWords.sustainu.settling(changes: 0, calls: told.count)
            throw CLIError("\(count(told.count, "scan or visit was", "scans or visits were")) refused by the server: \(Self.reasons(told.map(\.lastError))). "
                           + settling.prefix(1).uppercased() + settling.dropFirst() + ".\(clock)")
        }
        say("Synced: sent \(count(report.calls, "scan or visit", "scans or visits")); points and barcodes are up to date." + clock)
        await announceClassified(recycling, json: false)
    }

    /// The reasons of refusals, each once with how many it refused, most first: "taken more
    /// than 30 days ago (2), this server cannot classify photos (1)".
    static func reasons(_ reasons: [String?]) -> String {
        let short = reasons.map { reason -> String in
            // NB: the first clause names the reason; the rest (what to do) is in `status`.
            let text = (reason ?? "no reason given").components(separatedBy: CharacterSet(charactersIn: ":;")).first ?? ""
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            return trimmed.prefix(1).lowercased() + trimmed.dropFirst()
        }
        var order: [String] = [], counts: [String: Int] = [:]
        for reason in short {
            if counts[reason] == nil { order.append(reason) }
            counts[reason, default: 0] += 1
        }
        return order.enumerated().sorted { (counts[$0.element]!, -$0.offset) > (counts[$1.element]!, -$1.offset) }
            .map { "\($0.element) (\(counts[$0.element]!))" }.joined(separator: ", ")
    }
}

/// The outbox's refusals of an id, said of scans and visits (the engine speaks of "changes").
enum OutboxWords {
    static func speak<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch OutboxError.idTooShort(let id) {
            throw RecyclingError.idTooShort(id)
        } catch OutboxError.notFailed(let id) {
            throw CLIError("No refused scan or visit \(RecyclingError.quoted(id)) is on this device: `sustainu status` lists them with their ids")
        } catch OutboxError.ambiguous(let id, let matches) {
            throw CLIError("\(RecyclingError.quoted(id)) matches \(matches) refused scans or visits: give the whole id")
        }
    }
}
