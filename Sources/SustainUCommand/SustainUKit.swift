import ArgumentParser
import CommandLineSupport
import EventualAPI
import EventualKit
import Foundation
import Recycling

/// SustainU's account and outbox subcommands: the command kit's, in SustainU's words. What waits
/// here are scans and visits, calls with no server version to take: `settle` sends one again or
/// drops it, and `sync` refreshes the saved catalogues too.
extension SustainUCommand: AppCommand {
    typealias User = UserRecycling

    static var words: DeviceWords { .sustainu }

    static func app(_ options: GlobalOptions, creating: Bool) throws -> RecyclingApp { try options.app() }

    static func open(_ options: GlobalOptions, network: Bool) async throws -> UserRecycling { try await options.open(network: network) }

    static func signedInNote(_ signIn: AppSignIn<UserRecycling>) -> String? {
        signIn.preparedForOffline ? "Recycling points, packaging catalogue and tips saved for offline use." : nil
    }

    static func signedIn(_ user: UserRecycling) async { await announceClassified(user, json: false) }

    static func status(_ user: UserRecycling) async throws -> DeviceStatus { try await user.deviceStatus() }

    static func statusDetails(_ user: UserRecycling, _ status: DeviceStatus) async throws -> SustainUStatusDetails? {
        SustainUStatusDetails(try user.status(of: status))
    }

    static func statusText(_ user: UserRecycling, _ status: DeviceStatus, _ details: SustainUStatusDetails?) async -> String {
        var lines: [String] = []
        if status.connectivity == .online {
            lines.append(Terminal.paint("● Online", .green))
        } else {
            let banner = user.serverSilent ? "● The server is not answering" : "● No internet connection"
            lines.append(Terminal.paint(banner, .yellow) + ": scans and visits are saved and sent later.")
            lines.append("Unavailable until you are back online: " + RecyclingStatus.onlineOnly.joined(separator: "; ") + ".")
        }
        if let details {
            lines.append("points saved: " + (details.savedAt.map { age($0) } ?? "not yet (connect once to load them)")
                         + " · barcodes known offline: \(details.packagingEntries)")
        }
        let scans = details?.waitingScans ?? 0
        lines.append("waiting: \(status.pending) (\(scans) scan\(scans == 1 ? "" : "s")), failed: \(status.failed), "
                     + LastSync.phrase(status.lastSyncAt) + (status.pendingRevocations > 0 ? " · a sign-out waits to reach the server" : ""))
        if let ahead = user.clockAheadBySeconds() { lines.append(Terminal.clockSentence(aheadBySeconds: ahead)) }
        if let signInAgain = words.signInAgain(user.device) { lines.append(signInAgain) }
        let wrapped = lines.map { Terminal.wrap($0, width: Terminal.columns) }
        let table = status.entries.isEmpty ? [] : [words.table(status.entries)]
        let refused = status.failed > 0 ? [Terminal.wrap(words.refused(in: status), width: Terminal.columns)] : []
        let classified = await classifiedWhileAway(user).map { [Terminal.paint(Terminal.wrap($0, width: Terminal.columns), .green)] } ?? []
        return (wrapped + table + refused + classified).joined(separator: "\n")
    }

    static func sync(_ user: UserRecycling, progress: @escaping @Sendable (Int, Int) -> Void) async throws -> SyncReport {
        try await user.sync()
    }

    static func said(_ report: SyncReport, _ user: UserRecycling) async throws -> String {
        if let failure = report.failure { throw words.stopped(failure, sentBefore: report.calls) }
        // NB: a photo's upload is a call too, not a scan or a visit: counted apart.
        let upload = Attachments.uploadOperation
        let taken = max(0, report.calls - (report.callsByOperation[upload] ?? 0))
        let rejected = max(0, report.rejected - (report.rejectedCallsByOperation[upload] ?? 0))
        let clock = user.clockAheadBySeconds().map { " " + Terminal.clockSentence(aheadBySeconds: $0) } ?? ""
        if report.clockRefused > 0 {
            throw CLIError("\(count(report.clockRefused, "scan or visit waits", "scans or visits wait")): the server refused its time.\(clock)")
        }
        let refused = try user.outbox.entries(state: .failed)
        let sent = taken + rejected
        // NB: "Synced" only when nothing is left refused: a refusal is not a success.
        guard refused.isEmpty else {
            if sent > 0 {
                say("Sent \(count(sent, "scan or visit", "scans or visits"))" + (rejected > 0 ? ": the server took \(taken) and refused \(rejected)." : "."))
            }
            await announceClassified(user, json: false)
            // NB: a refused photo refuses its scan, which says why: the scan is what the student settles.
            let scans = refused.filter { $0.operation != upload }
            let told = scans.isEmpty ? refused : scans
            let settling = words.settling(changes: 0, calls: told.count)
            throw CLIError("\(count(told.count, "scan or visit was", "scans or visits were")) refused by the server: \(reasons(told.map(\.lastError))). "
                           + settling.prefix(1).uppercased() + settling.dropFirst() + ".\(clock)")
        }
        await announceClassified(user, json: false)
        return "Synced: sent \(count(taken, "scan or visit", "scans or visits")); points and barcodes are up to date." + clock
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

    static func summary(of change: FailedChange, _ user: UserRecycling) -> String { change.collection }

    static func retry(_ user: UserRecycling, _ id: String) async throws -> (line: OutboxLine, outcome: RetryOutcome) {
        try await user.retry(id)
    }

    static func discard(_ user: UserRecycling, _ id: String) async throws -> OutboxLine { try await user.discard(id) }
}

/// What `sustainu status --json` adds to the keys every app prints.
struct SustainUStatusDetails: Encodable {
    let waitingScans: Int
    @JSONNullable var pointsSavedAt: String?
    let packagingEntries: Int
    let unavailableOffline: [String]
    /// When the points were saved, in Unix milliseconds.
    let savedAt: Int64?

    private enum CodingKeys: String, CodingKey { case waitingScans, pointsSavedAt, packagingEntries, unavailableOffline }

    init(_ status: RecyclingStatus) {
        savedAt = status.pointsSavedAt
        waitingScans = status.waitingScans
        pointsSavedAt = status.pointsSavedAt.map(Timestamp.iso8601)
        packagingEntries = status.packagingEntries
        unavailableOffline = status.device.connectivity == .online ? [] : RecyclingStatus.onlineOnly
    }
}

extension DeviceWords {
    /// SustainU's words for its outbox.
    static let sustainu = DeviceWords(command: "sustainu", entries: "scans and visits", one: "scan or visit", many: "scans or visits",
                                      signOutQueued: "You are offline: the server will hear of it when it can be reached.",
                                      settleChoices: "--keep-mine | --discard", settlesCalls: true)
}
