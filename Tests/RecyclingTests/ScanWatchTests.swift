import EventualAPI
import EventualKit
import Foundation
import Testing
@testable import Recycling

/// `watchScans` is a live query of the scans and the outbox entries that send them: it hears a
/// scan added, answered or refused when it is committed, and nothing while nothing changes.
@Suite("Watching scans: a live query, no polling", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct ScanWatchTests {
    /// A phone on `server` sharing the data folder `folder`, patient with a busy machine.
    static func phone(_ folder: URL, server: URL) -> RecyclingApp {
        var configuration = RecyclingConfiguration(dataDirectory: folder, serverURL: server)
        configuration.localCommandSyncBudget = .seconds(20)
        configuration.catchUpBudget = .seconds(20)
        configuration.scanBudget = .seconds(20)
        return RecyclingApp(configuration: configuration)
    }

    @Test func aScanClassifiedByTheServerReachesTheWatcherAndOtherWritesDoNot() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let (email, _) = try await Phone(dataDirectory: scratch.folder("setup"), server: server).signUp()
            let folder = scratch.folder("phone")
            _ = try await Self.phone(folder, server: server).accounts.signIn(email: email, password: "long-password")
            // Given a scan made offline
            let offline = try await Self.phone(folder, server: unreachableServer).open().scan(barcode: SharedData.pastryBarcode)
            #expect(offline.scan.state == .waiting)
            // And the list watched on a phone back online
            let phone = try await Self.phone(folder, server: server).open()
            let watched = LiveValues(phone.watchScans())
            try await watched.wait { $0.map(\.state) == [.waiting] }
            // When only other tables change (the tips saved, a usage event)
            _ = try await phone.tips()
            await phone.tipOpened("plastic")
            // Then nothing is heard
            try await watched.letStragglersArrive()
            #expect(watched.all.count == 1, "\(watched.all)")
            // When the server classifies the scan
            let report = try await phone.sync()
            #expect(report.failure == nil && report.calls == 1, "\(String(describing: report.failure))")
            // Then the watcher hears it once, classified
            try await watched.wait { $0.map(\.state) == [.classified] }
            try await watched.letStragglersArrive()
            #expect(watched.all.map { $0.map(\.state) } == [[.waiting], [.classified]])
            // And a scan made online is heard, then its answer
            let second = try await phone.scan(barcode: SharedData.pastryBarcode)
            #expect(second.scan.state == .classified)
            try await watched.wait { $0.map(\.state) == [.classified, .classified] }
            await watched.cancel()
        }
    }

    @Test func aScanTheServerRefusesReachesTheWatcherWithItsReason() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let (email, _) = try await Phone(dataDirectory: scratch.folder("setup"), server: server).signUp()
            let folder = scratch.folder("phone")
            _ = try await Self.phone(folder, server: server).accounts.signIn(email: email, password: "long-password")
            let phone = try await Self.phone(folder, server: server).open()
            let watched = LiveValues(phone.watchScans())
            try await watched.wait { $0.isEmpty }
            // When a photo scan is refused by a server that cannot classify photos
            let photo = try plainPhoto(in: scratch.folder("camera"))
            _ = try? await phone.scan(photo: photo)
            // Then the watcher hears the refusal, with the server's words
            try await watched.wait { $0.first?.state == .failed }
            #expect(watched.latest?.first?.message?.contains("cannot classify photos") == true, "\(String(describing: watched.latest))")
            await watched.cancel()
        }
    }
}
