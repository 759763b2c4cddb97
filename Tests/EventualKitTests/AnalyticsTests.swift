import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

@Suite("Analytics on the device", .timeLimit(.minutes(3)))
struct AnalyticsTests {
    @Test func eventsRecordedOfflineReachTheServerOnceInBatches() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let proxy = try await FaultProxy.start(upstreamPort: port, seed: 7)
            defer { Task { await proxy.stop() } }
            let credentials = try await registerUser(port: port)
            let device = try Device(folder: scratch.url.appendingPathComponent("phone"), serverURL: URL(string: "http://127.0.0.1:\(proxy.port)")!)
            try await device.vault.signIn(email: credentials.email, password: credentials.password, client: device.link.client)
            let analytics = Analytics(store: device.store, app: AnalyticsApp.sustainU.rawValue, appVersion: "1.2.0", platform: "ios")
            // Given 1,200 events recorded in a basement
            proxy.mode = .refuse
            var ids: [String] = []
            for step in 0..<1200 {
                guard case .recorded(let id) = await analytics.record(.mapOpened(from: step % 3 == 0 ? .main : .navbar)) else {
                    Issue.record("not recorded")
                    return
                }
                ids.append(id)
            }
            let offline = await device.engine.syncNow()
            #expect(offline.failure != nil)
            #expect(try analytics.counts().waiting == 1200)
            // When the network returns
            proxy.mode = .pass
            // NB: under the whole suite's load the first request after the proxy stops refusing can
            // meet a connection it accepted while refusing and closes late ("closed the
            // connection"): a round that meets it stops, and the next one (the engine's timer)
            // sends the rest. At most a few rounds, every event counted once across them.
            var online = SyncReport(), rounds = 0
            repeat {
                let round = await device.engine.syncNow()
                online.events += round.events
                online.eventsRejected += round.eventsRejected
                online.failure = round.failure
                rounds += 1
            } while online.failure != nil && rounds < 4
            // Then all arrive, in batches the server takes (one of 1,200 would be refused whole), and leave the device
            #expect(online.failure == nil)
            #expect(online.events == 1200 && online.eventsRejected == 0)
            #expect(try analytics.counts() == AnalyticsCounts(waiting: 0, dropped: 0, rejected: 0))
            let filed = try await scratch.filedEvents()
            #expect(filed.map(\.id).sorted() == ids.sorted())
            #expect(filed.filter { $0.properties == #"{"source":"main"}"# }.count == 400)
        }
    }

    @Test func pastTheLimitTheOldestAreDroppedCountedAndReported() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let credentials = try await registerUser(port: port)
            var configuration = SyncConfiguration.fast
            configuration.analyticsLimits = Analytics.Limits(maxWaiting: 100)
            let device = try Device(folder: scratch.url.appendingPathComponent("phone"), serverURL: server, configuration: configuration)
            try await device.vault.signIn(email: credentials.email, password: credentials.password, client: device.link.client)
            let analytics = Analytics(store: device.store, app: "pantry", appVersion: "1", limits: Analytics.Limits(maxWaiting: 100))
            // Given 150 events where 100 may wait, and one 31 days old
            for step in 0..<150 { await analytics.record(.productVoted(rating: step % 11 - 5)) }
            #expect(try analytics.counts() == AnalyticsCounts(waiting: 100, dropped: 50, rejected: 0))
            let old = UnixMillis.now() - 31 * 86_400_000
            #expect(await analytics.record(.productPosted, at: old) != .off)
            #expect(try analytics.counts() == AnalyticsCounts(waiting: 100, dropped: 51, rejected: 0))
            // When they are sent
            let report = await device.engine.syncNow()
            #expect(report.failure == nil)
            // Then the newest 100 arrive, and one event tells the server 51 were dropped
            let filed = try await scratch.filedEvents()
            let votes = filed.filter { $0.name == AnalyticsName.productVoted }
            #expect(votes.count == 100)
            #expect(filed.filter { $0.name == AnalyticsName.productPosted }.isEmpty)
            #expect(filed.filter { $0.name == AnalyticsName.eventsDropped }.map(\.properties) == [#"{"count":51}"#])
            // Nothing is reported twice
            _ = await device.engine.syncNow()
            #expect(try await scratch.filedEvents().count == filed.count)
        }
    }

    @Test func eventsTheServerCannotFileTodayWaitWithoutFailingThePersonsSync() async throws {
        try await withLiveServer(configure: { $0.quotas.eventsPerUserPerDay = 2 }) { server, scratch in
            let port = try #require(server.port)
            let credentials = try await registerUser(port: port)
            let device = try Device(folder: scratch.url.appendingPathComponent("phone"), serverURL: server)
            try await device.vault.signIn(email: credentials.email, password: credentials.password, client: device.link.client)
            let analytics = Analytics(store: device.store, app: "pantry", appVersion: "1")
            // Given more events than the server files for a person in a day, and a change of the person's own
            for step in 0..<5 { await analytics.record(.productVoted(rating: step)) }
            try await device.store.write { tx in
                try tx.recordChange(SyncCollections.pantryItems, id: "milk", fields: [
                    "name": "Milk", "quantity": .number(1), "status": "inPantry", "boughtAt": .integer(1_764_000_000_000),
                ])
            }
            // When the device syncs
            let report = await device.engine.syncNow()
            // Then the change went and the sync is complete: the events only wait, said as deferred
            #expect(report.isComplete && report.sent == 1, "\(String(describing: report.failure))")
            #expect(report.eventsDeferred && report.events == 0)
            #expect(try analytics.counts() == AnalyticsCounts(waiting: 5, dropped: 0, rejected: 0))
            // And the next round waits out the server's Retry-After instead of asking again at once
            let again = await device.engine.syncNow()
            #expect(again.isComplete && !again.eventsDeferred && again.events == 0)
            #expect(try await scratch.filedEvents().isEmpty)
        }
    }

    @Test func switchedOffNothingIsRecordedOrSent() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let store = try LocalStore(path: scratch.url.appendingPathComponent("store.sqlite").path)
        let analytics = Analytics(store: store, app: "pantry", appVersion: "1", isEnabled: false)
        #expect(await analytics.record(.productPosted) == .off)
        analytics.isEnabled = true
        #expect(await analytics.record(.productPosted) != .off)
        #expect(try analytics.counts().waiting == 1)
        try await analytics.discardWaiting()
        #expect(try analytics.counts().waiting == 0)
    }

    @Test func eventsThatLookLikePersonalDataAreRefusedOnTheDevice() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let store = try LocalStore(path: scratch.url.appendingPathComponent("store.sqlite").path)
        let analytics = Analytics(store: store, app: "sustainu", appVersion: "1")
        let refused: [AnalyticsEvent] = [
            AnalyticsEvent(name: "login", properties: ["email": "x"]),
            AnalyticsEvent(name: "login", properties: ["password": "hunter22"]),
            AnalyticsEvent(name: "login", properties: ["access_token": "abc"]),
            AnalyticsEvent(name: "scan_started", properties: ["photo": "x"]),
            AnalyticsEvent(name: "point_visited", properties: ["lat": 4.60312, "lng": -74.06521]),
            AnalyticsEvent(name: "point_visited", properties: ["area": "4.60312,-74.06521"]),
            AnalyticsEvent(name: "login", properties: ["who": "ana.maria@uniandes.edu.co"]),
            AnalyticsEvent(name: "login", properties: ["header": .string("Bearer " + String(repeating: "x", count: 20))]),
            AnalyticsEvent(name: "login", properties: ["blob": .string("data:image/png;base64,iVBORw0KGgo")]),
            AnalyticsEvent(name: "Login", properties: [:]),
        ]
        for event in refused {
            guard case .refused = await analytics.record(event) else {
                Issue.record("\(event) was not refused")
                continue
            }
        }
        #expect(try analytics.counts().waiting == 0)
        // A rounded area and an id are fine
        let area = AnalyticsPrivacy.area(latitude: 4.60312, longitude: -74.06521)
        #expect(area == "4.603,-74.065")
        #expect(await analytics.record(AnalyticsEvent(name: "point_visited", properties: ["area": .string(area), "point_id": "0199aaaa-0000-7000-8000-000000000001"])) != .off)
        #expect(try analytics.counts().waiting == 1)
    }

    @Test func anEngineThatMustNotSendAnalyticsKeepsThem() async throws {
        try await withLiveServer { server, scratch in
            let credentials = try await registerUser(port: try #require(server.port))
            var configuration = SyncConfiguration.fast
            configuration.sendsAnalytics = false
            let device = try Device(folder: scratch.url.appendingPathComponent("phone"), serverURL: server, configuration: configuration)
            try await device.vault.signIn(email: credentials.email, password: credentials.password, client: device.link.client)
            let analytics = Analytics(store: device.store, app: "pantry", appVersion: "1")
            await analytics.record(.productPosted)
            let report = await device.engine.syncNow()
            #expect(report.failure == nil && report.events == 0)
            #expect(try await scratch.filedEvents().isEmpty)
        }
    }
}
