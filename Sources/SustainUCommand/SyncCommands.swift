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
        let online = status.connectivity == .online
        if output.json {
            struct Shape: Encodable {
                let connectivity: String, pending: Int, failed: Int, waitingScans: Int
                @JSONNullable var pointsSavedAt: String?
                let packagingEntries: Int, pendingSignOuts: Int
                let unavailableOffline: [String]
                let entries: [StatusLine]
            }
            print(try Terminal.json(Shape(
                connectivity: status.connectivity.rawValue, pending: status.pending, failed: status.failed, waitingScans: status.waitingScans,
                pointsSavedAt: status.pointsSavedAt.map(Timestamp.iso8601),
                packagingEntries: status.packagingEntries, pendingSignOuts: status.pendingRevocations,
                unavailableOffline: online ? [] : RecyclingStatus.onlineOnly, entries: status.entries)))
        } else {
            if online {
                print(Terminal.paint("● Online", .green))
            } else {
                say(Terminal.paint("● No internet connection", .yellow) + ": scans and visits are saved and sent later.")
                say("Unavailable until you are back online: " + RecyclingStatus.onlineOnly.joined(separator: "; ") + ".")
            }
            say("points saved: " + (status.pointsSavedAt.map { age($0) } ?? "not yet (connect once to load them)")
                  + " · barcodes known offline: \(status.packagingEntries)")
            say("waiting: \(status.pending) (\(status.waitingScans) scan\(status.waitingScans == 1 ? "" : "s")), failed: \(status.failed)"
                  + (status.pendingRevocations > 0 ? " · a sign-out waits to reach the server" : ""))
            if !status.entries.isEmpty {
                var table = Table("STATE", "WHAT", "TRIES", "REASON")
                for entry in status.entries {
                    table.add(.init(entry.state, entry.state == "failed" ? .red : nil), .init(entry.summary), .init("\(entry.attempts)"),
                              .init(entry.lastError ?? "-"))
                }
                print(table.render())
            }
        }
        await announceClassified(recycling, json: output.json)
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Send waiting scans and visits now, and refresh the saved points and barcodes.",
                                                    usage: "sustainu sync")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let recycling = try global.app().open()
        let report = try await recycling.sync()
        if let failure = report.failure {
            throw CLIError("Sync stopped: \(failure.description)" + (report.calls > 0 ? " (\(report.calls) sent before)" : ""))
        }
        var line = "Synced: sent \(report.calls) scan(s) and visit(s); points and barcodes are up to date."
        if report.rejected > 0 { line += " \(report.rejected) refused by the server: see sustainu scans." }
        say(line)
        await announceClassified(recycling, json: false)
    }
}
