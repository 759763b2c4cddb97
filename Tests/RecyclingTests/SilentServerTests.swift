import Foundation
import Testing
@testable import Recycling

/// A server that accepts connections and never answers (a captive portal, one bar of signal):
/// `sustainu` answers what it can from the device at once, and what needs the network says so in
/// one line within its stated timeout. Each command runs with its own budgets (not the patient
/// ones the other suites give a busy machine).
@Suite("sustainu against a silent server", .timeLimit(.minutes(4)), .tags(.endToEnd))
struct SilentServerTests {
    /// Runs a command with the command's own budgets and says how long it took.
    func timed(_ phone: Phone, _ arguments: [String]) async throws -> (CommandOutcome, Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        let outcome = try await phone.run(arguments, patient: false)
        return (outcome, clock.now - start)
    }

    @Test func localCommandsDoNotWaitForASilentServer() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            try await withProxy(to: server) { proxy, proxied in
                // Given a student whose phone loaded the points, score, leaderboard and tips online
                let phone = Phone(dataDirectory: scratch.folder("phone"), server: proxied)
                _ = try await phone.signUp()
                let points = try pointsJSON(try await phone.run(["points", "--json", "--limit", "1"]))
                let pointID = try #require(points.first?["id"] as? String)
                for arguments in [["score"], ["leaderboard"], ["tips"]] {
                    let loaded = try await phone.run(arguments)
                    #expect(loaded.status == 0, "\(arguments): \(loaded.stderr)")
                }
                // When the server accepts connections and never answers
                proxy.mode = .blackHole
                // Then commands that only read this device's data do not even try the network
                for arguments in [["whoami"], ["scans"], ["reminders", "--now", "10:05"]] {
                    let before = await proxy.settledConnectionsAccepted()
                    let (outcome, _) = try await timed(phone, arguments)
                    #expect(outcome.status == 0, "\(arguments): \(outcome.stderr)")
                    #expect(await proxy.settledConnectionsAccepted() == before, "\(arguments) tried the network")
                }
                // And those that revalidate a saved copy or send what they queued answer from the
                // device at once, saying the copy is a saved one. NB: each waited 3 s or more for the
                // silent server before (its read budget); the bound leaves a busy machine 2 s to start
                // the process and still tells "waited for the network" from "did not".
                let local: [([String], String)] = [
                    (["points", "--limit", "3"], "Offline: recycling points saved"), (["score"], "Offline: your score as of"),
                    (["leaderboard"], "Offline: the leaderboard as of"), (["tips"], "Offline: tips saved"),
                    (["point", pointID], "visits"), (["scan", "--barcode", SharedData.pastryBarcode], "offline guess"),
                    (["status"], "The server is not answering"), (["scans"], "waiting"),
                ]
                for (arguments, says) in local {
                    let (outcome, took) = try await timed(phone, arguments)
                    #expect(outcome.status == 0, "\(arguments): \(outcome.stderr)")
                    #expect(outcome.stdout.contains(says), "\(arguments): \(outcome.stdout)")
                    #expect(took < .milliseconds(2500), "\(arguments) took \(took)")
                }
                // And with a scan waiting, what reads only this device still opens no connection, and
                // the others wait for one answer at most (not a probe and then a read). NB: each of
                // these opened two before, scans and reminders one.
                for arguments in [["scans"], ["reminders", "--now", "10:05"], ["score"], ["leaderboard"], ["tips"],
                                  ["scan", "--barcode", SharedData.pastryBarcode]] {
                    let before = await proxy.settledConnectionsAccepted()
                    let (outcome, _) = try await timed(phone, arguments)
                    #expect(outcome.status == 0, "\(arguments): \(outcome.stderr)")
                    let opened = await proxy.settledConnectionsAccepted() - before
                    #expect(opened <= (["scans", "reminders"].contains(arguments[0]) ? 0 : 1), "\(arguments) opened \(opened) connections")
                }
                // And a sync, which needs the server, says so in one line after its 5 s wait for an answer
                let (sync, took) = try await timed(phone, ["sync"])
                #expect(sync.isOneLineError && sync.stderr.contains("did not answer in 5 s"), "\(sync.stdout)\(sync.stderr)")
                #expect(took < .seconds(8), "sync took \(took)")
                // When the server answers again, what waited arrives
                proxy.mode = .pass
                #expect(try await phone.run(["sync"]).status == 0)
                let status = try #require(try json(try await phone.run(["status", "--json"])) as? [String: Any])
                #expect(status["pending"] as? Int == 0 && status["connectivity"] as? String == "online", "\(status)")
                // And signing out in the captive portal is immediate too; the server hears of it later
                proxy.mode = .blackHole
                let (logout, tookToSignOut) = try await timed(phone, ["logout"])
                #expect(logout.status == 0 && logout.stdout.contains("the server will hear of it"), "\(logout.stdout)\(logout.stderr)")
                #expect(tookToSignOut < .milliseconds(2500), "logout took \(tookToSignOut)")
            }
        }
    }

    @Test func aReadWithNoSavedCopySaysTheServerIsNotAnsweringWithinItsBudget() async throws {
        try await withLiveServer { server, scratch in
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            _ = try await phone.signUp()
            try await withSilentServer { silent in
                // Given a phone that never loaded the leaderboard, in a building where the server is silent
                let clock = ContinuousClock()
                let start = clock.now
                let board = try await phone.run(["leaderboard"], via: silent, patient: false)
                // Then it says in one line that the server is not answering (not "connect"), within its 3 s budget
                #expect(board.isOneLineError && board.stderr.contains("The server is not answering, and this device has never loaded the leaderboard"),
                        "\(board.stderr)")
                #expect(clock.now - start < .seconds(8))
            }
        }
    }
}

/// Runs `body` with a fault proxy in front of `server` (handed its URL), stopped afterwards.
func withProxy<T: Sendable>(to server: URL, _ body: (FaultProxy, URL) async throws -> T) async throws -> T {
    let proxy = try await FaultProxy.start(upstreamPort: try #require(server.port), seed: 18)
    do {
        let value = try await body(proxy, URL(string: "http://127.0.0.1:\(proxy.port)")!)
        await proxy.stop()
        return value
    } catch {
        await proxy.stop()
        throw error
    }
}
