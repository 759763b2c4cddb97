import EventualAPI
import EventualKit
import Foundation
import Testing
@testable import Recycling

/// A phone whose clock runs an hour fast: its scans are stamped by the server's time once the
/// engine knows it, and a scan stamped before that is sent by the server's now, never refused for
/// good as "taken in the future".
@Suite("Scans from a phone with a fast clock", .timeLimit(.minutes(2)), .tags(.endToEnd))
struct ClockSkewScanTests {
    @Test func scansFromAFastClockAreClassifiedNotRefused() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let (email, _) = try await Phone(dataDirectory: scratch.folder("setup"), server: server).signUp()
            // Given a phone whose clock is an hour ahead, signed in, that has not talked to the server yet
            var configuration = RecyclingConfiguration(dataDirectory: scratch.folder("phone"), serverURL: server)
            configuration.wallClock = { UnixMillis.now() + 3_600_000 }
            configuration.localCommandSyncBudget = .seconds(20)
            configuration.scanBudget = .seconds(20)
            let app = RecyclingApp(configuration: configuration)
            _ = try await app.accounts.signIn(email: email, password: "long-password")
            let recycling = try await app.open()
            // When it scans (its first request learns the server's time) and scans again
            let first = try await recycling.scan(barcode: SharedData.pastryBarcode)
            let second = try await recycling.scan(barcode: SharedData.pastryBarcode)
            // Then both are classified, and the second is stamped within a minute of the real time
            #expect(first.scan.state == .classified, "\(first.scan.message ?? "")")
            #expect(second.scan.state == .classified, "\(second.scan.message ?? "")")
            #expect(abs(second.scan.takenAt - UnixMillis.now()) < 60_000)
            #expect(try recycling.outbox.counts().failed == 0)
        }
    }
}
