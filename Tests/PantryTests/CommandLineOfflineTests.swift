import Foundation
import Testing
@testable import Pantry

/// Local first, through the `pantry` executable: a server that never answers does not hold a
/// local command up, and two devices that used the same item offline agree once they sync.
@Suite("The pantry command offline", .timeLimit(.minutes(2)), .tags(.endToEnd))
struct CommandLineOfflineTests {
    /// Runs a command as a person does, with no setting of its waits (a server's first byte within
    /// 5 s, a local command's answer within 300 ms), and says how long it took.
    func timed(_ pantry: CommandProcess, _ arguments: [String], server: URL) async throws -> (CommandOutcome, Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        let outcome = try await pantry.run(arguments, server: server, answerTimeout: nil)
        return (outcome, clock.now - start)
    }

    @Test func localCommandsDoNotWaitForASilentServer() async throws {
        try await withLiveServer { live, scratch in
            // Given a device signed in online, with two items
            let (pantry, _) = try await signedInProcess(live, scratch)
            _ = try await pantry.run(["add", "--name", "Eggs", "--quantity", "6"])
            _ = try await pantry.run(["add", "--name", "Fish"])
            // (a command waits only 300 ms for the server: on a busy machine the sync finishes them)
            #expect(try await pantry.run(["sync"]).status == 0)
            let items = try jsonItems(try await pantry.run(["list", "--json", "--sort", "name"]))
            let eggs = try #require(items.first?["id"] as? String), fish = try #require(items.last?["id"] as? String)
            try await withSilentServer { silent in
                // When the server accepts connections and never answers
                let commands: [[String]] = [
                    ["add", "--name", "Milk"], ["consume", eggs, "--quantity", "2"], ["edit", eggs, "--category", "breakfast"],
                    ["remove", fish], ["status"], ["list"],
                ]
                for arguments in commands {
                    let (outcome, took) = try await timed(pantry, arguments, server: silent)
                    // Then each local command answers at once
                    #expect(outcome.status == 0, "\(arguments): \(outcome.stderr)")
                    #expect(took < .milliseconds(2500), "\(arguments) took \(took)")
                }
                // And the changes wait in the outbox
                let status = try jsonObject(try await pantry.run(["status", "--json"], server: unreachableServer))
                #expect(status["pending"] as? Int == 4, "\(status)")
                // And a household's changes do not wait for the server either: queued, said at once
                for arguments in [["household", "create", "Cabin"], ["household", "invite", "someone@example.com", "--to", "Cabin"],
                                  ["household", "members", "Cabin"], ["household", "invitations"]] {
                    let (outcome, took) = try await timed(pantry, arguments, server: silent)
                    #expect(took < .milliseconds(2500), "\(arguments) took \(took): \(outcome.stdout)\(outcome.stderr)")
                    #expect(!(outcome.stdout + outcome.stderr).contains("No connection"), "\(arguments): \(outcome.stdout)\(outcome.stderr)")
                }
                let barn = try await pantry.run(["household", "create", "Barn"], server: silent, answerTimeout: nil)
                #expect(barn.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                        .contains("queued; it reaches the server at the next sync (the server is not answering)"), "\(barn.stdout)")
                // And a sync says what happened, in one line, after the first-byte timeout
                let (sync, took) = try await timed(pantry, ["sync"], server: silent)
                #expect(sync.isOneLineError, "\(sync.stderr)")
                let host = silent.absoluteString.hasSuffix("/") ? String(silent.absoluteString.dropLast()) : silent.absoluteString
                #expect(sync.stderr.contains("The server at \(host) accepted the connection but did not answer in 5 s"), "\(sync.stderr)")
                // NB: 5 s of first-byte timeout plus a process start that took 1.6 s under the whole suite;
                // well under the 30 s a request may take in all, which is what it would wait otherwise.
                #expect(took < .seconds(15), "sync took \(took)")
            }
            // And once the server answers, everything arrives
            #expect(try await pantry.run(["sync"]).status == 0)
            #expect(try jsonObject(try await pantry.run(["status", "--json"]))["pending"] as? Int == 0)
        }
    }

    @Test func twoDevicesConsumingOfflineBothCount() async throws {
        try await withLiveServer { server, scratch in
            // Given six bananas on two devices
            let (phone, email) = try await signedInProcess(server, scratch, folder: "phone")
            #expect(try await phone.run(["add", "--name", "Bananas", "--quantity", "6"]).status == 0)
            #expect(try await phone.run(["sync"]).status == 0)
            let tablet = CommandProcess.pantry(dataDirectory: scratch.folder("tablet"), server: server)
            #expect(try await tablet.run(["login", "--email", email, "--password-stdin"], input: "long-password\n").status == 0)
            let id = try #require(try jsonItems(try await tablet.run(["list", "--json"])).first?["id"] as? String)
            // When both eat some with no server: two on the phone, one on the tablet
            let phoneAte = try await phone.run(["consume", id, "--quantity", "2"], server: unreachableServer)
            // NB: each says its change waits on the device
            let waits = "Offline: the change waits and is sent when the server can be reached.\n"
            #expect(phoneAte.stdout == "Bananas: 4 left.\n" + waits, "\(phoneAte.stderr)")
            let tabletAte = try await tablet.run(["consume", id, "--quantity", "1"], server: unreachableServer)
            #expect(tabletAte.stdout == "Bananas: 5 left.\n" + waits, "\(tabletAte.stderr)")
            // And both sync, twice each, in turn
            for device in [phone, tablet, phone, tablet] {
                let synced = try await device.run(["sync"])
                #expect(synced.status == 0, "\(synced.stderr)")
            }
            // Then both have three left
            for device in [phone, tablet] {
                let quantities = try jsonItems(try await device.run(["list", "--json"])).map { $0["quantity"] as? Double }
                #expect(quantities == [3])
            }
            // And so does a third device that signs in afresh, which sees only what the server has
            let laptop = CommandProcess.pantry(dataDirectory: scratch.folder("laptop"), server: server)
            #expect(try await laptop.run(["login", "--email", email, "--password-stdin"], input: "long-password\n").status == 0)
            #expect(try jsonItems(try await laptop.run(["list", "--json"])).map { $0["quantity"] as? Double } == [3])
        }
    }
}
