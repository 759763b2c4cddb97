import EventualAPI
import EventualKit
import Foundation
import GRDB
import Testing
@testable import Pantry

/// `pantry sync` with changes stamped ahead of the server's clock: a device wedged by a stamp an
/// hour ahead recovers, and a change the server still refuses is said, with a non-zero status.
@Suite("The pantry command and the clock", .timeLimit(.minutes(2)), .tags(.endToEnd))
struct ClockTests {
    /// Makes the device's clock resume after a stamp `ahead` milliseconds in the future, as if
    /// its last change had been made while its clock was that far ahead.
    func stampAhead(_ folder: URL, server: URL, by ahead: Int64) async throws {
        let pantry = try await device(folder, server: server).open()
        let stamp = HLCStamp(millis: UnixMillis.now() + ahead, counter: 0, node: pantry.store.node)
        try await pantry.store.write { tx in
            try tx.db.execute(sql: "INSERT OR REPLACE INTO eventual_state (key, value) VALUES ('lastStamp', ?)", arguments: [stamp.description])
        }
    }

    @Test func aDeviceWedgedByAStampAnHourAheadSyncsAgain() async throws {
        try await withLiveServer { server, scratch in
            // Given a device whose last change was stamped while its clock was an hour fast
            let (pantry, _) = try await signedInProcess(server, scratch)
            try await stampAhead(pantry.dataDirectory, server: server, by: 3_600_000)
            #expect(try await pantry.run(["add", "--name", "Rice"], server: unreachableServer).status == 0)
            // When it syncs
            let sync = try await pantry.run(["sync"])
            // Then the change is stamped again and sent, and later edits go through too
            #expect(sync.status == 0 && sync.stdout.hasPrefix("Synced: sent 1 change(s)"), "\(sync.stdout) \(sync.stderr)")
            #expect(try await pantry.run(["add", "--name", "Beans"], server: unreachableServer).status == 0)
            let again = try await pantry.run(["sync"])
            #expect(again.status == 0 && again.stdout.hasPrefix("Synced: sent 1 change(s)"), "\(again.stdout) \(again.stderr)")
            #expect(try jsonObject(try await pantry.run(["status", "--json"]))["pending"] as? Int == 0)
        }
    }

    @Test func aChangeStillRefusedForTheClockFailsTheSyncAndIsKept() async throws {
        try await withLiveServer(configure: { $0.maxClockDrift = .seconds(60) }) { server, scratch in
            // Given a server that allows 60 s of drift and a device whose stamps run 200 s ahead
            let (pantry, _) = try await signedInProcess(server, scratch)
            try await stampAhead(pantry.dataDirectory, server: server, by: 200_000)
            #expect(try await pantry.run(["add", "--name", "Rice"], server: unreachableServer).status == 0)
            // When it syncs
            let sync = try await pantry.run(["sync"])
            // Then it does not say "Synced": one line says how many were refused and why, status 1
            #expect(sync.isOneLineError && sync.status == 1, "\(sync.status) \(sync.stdout) \(sync.stderr)")
            #expect(sync.stderr.contains("1 change(s) refused as stamped ahead of the server's clock"), "\(sync.stderr)")
            // And the change waits, neither failed nor lost
            let status = try jsonObject(try await pantry.run(["status", "--json"]))
            #expect(status["pending"] as? Int == 1 && status["failed"] as? Int == 0, "\(status)")
        }
    }
}
