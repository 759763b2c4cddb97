import EventualAPI
import EventualStorage
import Foundation
import GRDB
import Logging
import Synchronization
import Testing
@testable import EventualKit
@testable import EventualServer

/// A device of an app with its own subscriptions: pantry items (`items`) and SpendiQ budgets
/// (`limits`) mirrored, either or both.
private final class AppDevice: Sendable {
    let store: LocalStore
    let vault: SessionVault
    let engine: SyncEngine
    let link: ServerLink

    static let limitsMigration = LocalMigration("test-limits") { db in
        try db.execute(sql: """
            CREATE TABLE limits (id TEXT PRIMARY KEY, period TEXT, category TEXT, currency TEXT, amountMinor INTEGER)
            """)
    }

    init(folder: URL, serverURL: URL, pantry: Bool, spending: Bool, subscriptions: [SyncSubscription]? = nil, pullLimit: Int = 500) throws {
        store = try LocalStore(path: folder.appendingPathComponent("store.sqlite").path, migrations: [itemsMigration, Self.limitsMigration])
        let vault = SessionVault(secrets: FileSecretStore(directory: folder.appendingPathComponent("secrets")), rounds: 100_000)
        self.vault = vault
        link = ServerLink(serverURL: serverURL, timeout: .seconds(30), timeouts: .patient) { vault.accessToken }
        var configuration = SyncConfiguration.fast
        configuration.pullLimit = pullLimit
        let mirrors: [any SyncedCollectionStore] = (pantry ? [TableMirror(SyncCollections.pantryItems, table: "items")] : [])
            + (spending ? [TableMirror(SyncCollections.spendingLimits, table: "limits")] : [])
        engine = SyncEngine(store: store, link: link, collections: mirrors, subscriptions: subscriptions, configuration: configuration,
                            logger: Logger(label: "test-app-device"))
    }

    func count(_ table: String, _ condition: String = "1") throws -> Int {
        try store.reader.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table) WHERE \(condition)") ?? 0 }
    }

    /// Writes `count` items through the mirror, touched at `touchedAt`.
    func addItems(_ count: Int, prefix: String, touchedAt: Int64?) async throws {
        let mirror = TableMirror(SyncCollections.pantryItems, table: "items")
        try await store.write { tx in
            for index in 0..<count {
                var fields: [String: SyncValue] = ["name": .string("\(prefix) \(index)"), "quantity": 1, "status": "inPantry",
                                                   "boughtAt": .integer(1_764_000_000_000)]
                if let touchedAt { fields["touchedAt"] = .integer(touchedAt) }
                try mirror.insert("\(prefix)-\(index)", fields, in: tx)
            }
        }
    }

    func addLimits(_ count: Int) async throws {
        let mirror = TableMirror(SyncCollections.spendingLimits, table: "limits")
        try await store.write { tx in
            for index in 0..<count {
                try mirror.insert("limit-\(index)", ["period": "monthly", "category": .string("c\(index)"), "currency": "EUR",
                                                     "amountMinor": 10_000], in: tx)
            }
        }
    }
}

@Suite("First sync: only the app's collections, priority first, progress, resumable, no deletions, start over", .timeLimit(.minutes(4)))
struct FirstSyncTests {
    private static let day: Int64 = 24 * 3600 * 1000

    @Test(arguments: Backend.available)
    func aPantryDeviceNeverReceivesSpendingRecordsNorTheReverse(_ backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let port = try #require(server.port)
            let user = try await registerUser(port: port)
            // Given one person's pantry items and budgets, written by a device of each app
            let writer = try AppDevice(folder: scratch.url.appendingPathComponent("writer"), serverURL: server, pantry: true, spending: true)
            try await writer.vault.signIn(email: user.email, password: user.password, client: writer.link.client)
            try await writer.addItems(5, prefix: "item", touchedAt: nil)
            try await writer.addLimits(3)
            #expect(await writer.engine.syncNow().sent == 8)
            // When a new pantry device and a new SpendiQ device sync
            let pantry = try AppDevice(folder: scratch.url.appendingPathComponent("pantry"), serverURL: server, pantry: true, spending: false)
            let spending = try AppDevice(folder: scratch.url.appendingPathComponent("spending"), serverURL: server, pantry: false, spending: true)
            for device in [pantry, spending] {
                try await device.vault.signIn(email: user.email, password: user.password, client: device.link.client)
            }
            let pantryReport = await pantry.engine.syncNow()
            let spendingReport = await spending.engine.syncNow()
            // Then each received its own app's records only (the count is of every record the pulls brought)
            #expect(pantryReport.failure == nil && spendingReport.failure == nil)
            #expect(pantryReport.pulled + pantryReport.echoes == 5)
            #expect(spendingReport.pulled + spendingReport.echoes == 3)
            #expect(try pantry.count("items") == 5)
            #expect(try spending.count("limits") == 3)
        }
    }

    @Test(arguments: Backend.available)
    func priorityZeroIsUsableBeforeTheRestAndProgressOnlyRisesToItsTotal(_ backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let port = try #require(server.port)
            let user = try await registerUser(port: port)
            let now = UnixMillis.now()
            let writer = try AppDevice(folder: scratch.url.appendingPathComponent("writer"), serverURL: server, pantry: true, spending: false)
            try await writer.vault.signIn(email: user.email, password: user.password, client: writer.link.client)
            // Given 40 items touched this week and 160 touched two months ago (and older ones first on the server)
            try await writer.addItems(160, prefix: "old", touchedAt: now - 60 * Self.day)
            try await writer.addItems(40, prefix: "recent", touchedAt: now - 2 * Self.day)
            #expect(await writer.engine.syncNow().sent == 200)
            // When a new device whose first sync brings the last 30 days first, 10 records a page, behind a slow network
            let proxy = try await FaultProxy.start(upstreamPort: port, seed: 23)
            proxy.mode = .flaky(latency: .milliseconds(5)...(.milliseconds(15)), resetProbability: 0)
            let subscriptions = SyncSubscription.recentFirst(SyncCollections.pantryItems.name, by: "touchedAt", within: .seconds(30 * 24 * 3600))
            let device = try AppDevice(folder: scratch.url.appendingPathComponent("new"), serverURL: URL(string: "http://127.0.0.1:\(proxy.port)")!,
                                       pantry: true, spending: false, subscriptions: subscriptions, pullLimit: 10)
            try await device.vault.signIn(email: user.email, password: user.password, client: device.link.client)
            let seen = Mutex<[[PullProgress]]>([])
            let watcher = Task {
                for await status in device.engine.status where !status.firstSync.isEmpty {
                    seen.withLock { $0.append(status.firstSync) }
                    if status.hasSynced(priority: 1) { return }
                }
            }
            let sync = Task { await device.engine.syncNow() }
            await device.engine.synced(priority: 0)
            // Then priority 0 is all there while the rest is still coming
            let recentAtPriority0 = try device.count("items", "name LIKE 'recent%'")
            let allAtPriority0 = try device.count("items")
            let report = await sync.value
            await watcher.value
            await proxy.stop()
            #expect(report.failure == nil)
            #expect(recentAtPriority0 == 40)
            #expect(allAtPriority0 < 200, "priority 0 returned after everything had arrived")
            #expect(try device.count("items") == 200)
            // And each priority's received and total only ever rose, and ended at the total
            let history = seen.withLock { $0 }
            for priority in [0, 1] {
                let steps = history.compactMap { $0.first { $0.priority == priority } }
                #expect(zip(steps, steps.dropFirst()).allSatisfy { $0.received <= $1.received && $0.total <= $1.total },
                        "priority \(priority): \(steps.map { "\($0.received)/\($0.total)" })")
                #expect(steps.last.map { $0.isComplete && $0.received == $0.total } == true)
                #expect(steps.contains { !$0.isComplete && $0.total > 0 }, "priority \(priority) had a total while it ran")
            }
            #expect(history.last?.map(\.received) == [40, 160])
        }
    }

    @Test(arguments: Backend.available)
    func aFirstSyncStoppedMidWayGoesOnFromItsLastPageWithNoPageFetchedTwice(_ backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let port = try #require(server.port)
            let user = try await registerUser(port: port)
            let writer = try AppDevice(folder: scratch.url.appendingPathComponent("writer"), serverURL: server, pantry: true, spending: false)
            try await writer.vault.signIn(email: user.email, password: user.password, client: writer.link.client)
            try await writer.addItems(120, prefix: "item", touchedAt: nil)
            #expect(await writer.engine.syncNow().sent == 120)
            let proxy = try await FaultProxy.start(upstreamPort: port, seed: 7)
            let viaProxy = URL(string: "http://127.0.0.1:\(proxy.port)")!
            let folder = scratch.url.appendingPathComponent("new")
            // Given a first sync, 10 records a page, whose network goes once 4 pages came
            let first = try AppDevice(folder: folder, serverURL: viaProxy, pantry: true, spending: false, pullLimit: 10)
            try await first.vault.signIn(email: user.email, password: user.password, client: first.link.client)
            let pulls: @Sendable () -> [String] = { proxy.requestLog.filter { $0.hasPrefix("GET /v1/sync/pull") } }
            let cutter = Task {
                while pulls().count < 4 { try? await Task.sleep(for: .milliseconds(2)) }
                proxy.mode = .refuse
            }
            let stopped = await first.engine.syncNow()
            await cutter.value
            #expect(stopped.failure != nil)
            let received = try first.count("items")
            #expect(received >= 30 && received < 120, "stopped after \(received)")
            // When the app starts again (a new engine on the same store) and the network is back
            let committed = try #require(try await first.store.reader.read { db in
                try String.fetchOne(db, sql: "SELECT cursor FROM eventual_subscriptions")
            })
            let before = pulls().count
            proxy.mode = .pass
            let again = try AppDevice(folder: folder, serverURL: viaProxy, pantry: true, spending: false, pullLimit: 10)
            try await again.vault.signIn(email: user.email, password: user.password, client: again.link.client)
            let resumed = await again.engine.syncNow()
            #expect(resumed.failure == nil)
            let requests = pulls()
            await proxy.stop()
            let since = requests.map { line in
                URLComponents(string: String(line.dropFirst("GET ".count)))?.queryItems?.first { $0.name == "since" }?.value ?? "(none)"
            }
            // Then it went on from the last page it wrote, and asked for no page twice but the one
            // whose answer the cut lost (if the cut came while it was asked)
            #expect(since[before] == committed)
            let repeated = Dictionary(grouping: since, by: { $0 }).filter { $0.value.count > 1 }
            #expect(repeated.isEmpty || (Array(repeated.keys) == [committed] && repeated[committed]?.count == 2
                                         && since[before - 1] == committed), "\(requests)")
            // And every record came once
            #expect(try again.count("items") == 120)
            let progress = again.engine.currentStatus.firstSync
            #expect(progress.map(\.received) == [120] && progress.allSatisfy(\.isComplete))
        }
    }

    @Test(arguments: Backend.available)
    func aDeviceOfflineLongerThanTheRetentionStartsOverAndLosesNoneOfItsWaitingChanges(_ backend: Backend) async throws {
        let caught = ServerDatabase()
        try await withLiveServer(on: backend, configure: caught.catchLocation) { server, scratch in
            let port = try #require(server.port)
            let user = try await registerUser(port: port)
            let a = try AppDevice(folder: scratch.url.appendingPathComponent("a"), serverURL: server, pantry: true, spending: false)
            let b = try AppDevice(folder: scratch.url.appendingPathComponent("b"), serverURL: server, pantry: true, spending: false)
            for device in [a, b] { try await device.vault.signIn(email: user.email, password: user.password, client: device.link.client) }
            // Given two devices with the same three items
            try await a.addItems(3, prefix: "item", touchedAt: nil)
            _ = await a.engine.syncNow()
            _ = await b.engine.syncNow()
            #expect(try b.count("items") == 3)
            // And, while device A is away, B deletes one and the server purges that deletion
            try await b.store.write { tx in _ = try TableMirror(SyncCollections.pantryItems, table: "items").delete("item-0", in: tx) }
            _ = await b.engine.syncNow()
            #expect(try await caught.purgeDeletions() == 1)
            // And A made changes offline: a new item and an edit
            try await a.addItems(1, prefix: "offline", touchedAt: nil)
            try await a.store.write { tx in
                try TableMirror(SyncCollections.pantryItems, table: "items").update("item-1", setting: ["name": "Edited away"], in: tx)
            }
            // When A syncs again
            let report = await a.engine.syncNow()
            // Then it started over: the deleted item is gone, its own changes reached the server and stayed here
            #expect(report.failure == nil)
            #expect(report.startedOver)
            let names = try await a.store.reader.read { db in try String.fetchAll(db, sql: "SELECT name FROM items ORDER BY id") }
            #expect(Set(names) == ["Edited away", "item 2", "offline 0"] && names.count == 3)
            #expect(try a.outbox.counts() == OutboxCounts(pending: 0, failed: 0))
            _ = await b.engine.syncNow()
            let onB = try await b.store.reader.read { db in try String.fetchAll(db, sql: "SELECT name FROM items") }
            #expect(Set(onB) == ["Edited away", "item 2", "offline 0"])
            // And a next sync goes on normally
            #expect(await a.engine.syncNow().startedOver == false)
        }
    }
}

private extension AppDevice {
    var outbox: Outbox { Outbox(store: store) }
}
