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
