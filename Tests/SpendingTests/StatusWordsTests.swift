import Foundation
import Testing

/// What `spendiq status` lists is the person's own work: never what every start records for itself.
@Suite("spendiq status lists the person's work only", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct StatusWordsTests {
    @Test func aStartsLastVisitIsNeverListedAsWaiting() async throws {
        try await withLiveServer { server, scratch in
            // Given a signed-in person, offline, whose every start records a visit
            let device = try await CommandLineTests.signedIn(server, scratch)
            let offline = CommandProcess.spendiq(dataDirectory: device.dataDirectory, server: unreachableServer)
            #expect(try await offline.run(["accounts", "add", "Cash", "--currency", "EUR"]).status == 0)
            // When status is asked twice (two more starts, two more visits)
            _ = try await offline.run(["status"])
            let status = try await offline.run(["status"])
            // Then only the account waits
            #expect(status.status == 0, "\(status.stderr)")
            #expect(!status.stdout.contains("last visit"), "\(status.stdout)")
            #expect(status.stdout.contains("account Cash"), "\(status.stdout)")
            let json = try await offline.run(["status", "--json"])
            #expect(!json.stdout.contains("last visit") && json.stdout.contains("Cash"), "\(json.stdout)")
        }
    }
}

/// Against a server that accepts the connection and never answers, what SpendiQ shows from a
/// saved copy is shown within a moment (offers, insights and invitations waited 4-5 s before).
@Suite("spendiq reads answer from the device when the server is silent", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct SilentServerReadTests {
    @Test func offersInsightsAndInvitationsShowTheirCopyAtOnce() async throws {
        try await withLiveServer { server, scratch in
            // Given each read once online, so that the device holds a copy
            let device = try await CommandLineTests.signedIn(server, scratch)
            for arguments in [["offers", "--near", "43.7394,7.4278"], ["insights"], ["invitations"]] {
                let online = try await device.run(arguments)
                #expect(online.status == 0, "\(arguments): \(online.stderr)")
            }
            try await withSilentServer { silent in
                // When the server goes silent (offers asked a kilometre away, which needs a new list)
                for arguments in [["offers", "--near", "43.7480,7.4350"], ["insights"], ["invitations"]] {
                    let started = ContinuousClock.now
                    let outcome = try await device.run(arguments, server: silent, answerTimeout: nil)
                    let took = ContinuousClock.now - started
                    // Then each shows its copy, within a moment (the bound leaves a busy machine 2 s to start)
                    #expect(outcome.status == 0, "\(arguments): \(outcome.stderr)")
                    #expect(took < .milliseconds(2500), "\(arguments) took \(took)")
                }
            }
        }
    }
}
