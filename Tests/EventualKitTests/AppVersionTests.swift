import EventualAPI
import EventualServer
import Foundation
import GRDB
import Logging
import Testing
@testable import EventualKit

/// Versions of an app side by side, through a real server on both databases: a device of a newer
/// version than the server holds what the server lacks until it is deployed; devices of an older
/// version keep what they do not understand and never erase it; an upgraded device folds what it
/// kept into its new columns with no network and fetches no record again; in the end every device
/// and the server agree field by field, and a second run changes nothing.
@Suite("Versions of an app: new fields reach every device, nothing is skipped", .timeLimit(.minutes(4)))
struct AppVersionTests {
    static let v1 = """
        id: shelf
        title: Shelf
        collections:
          - name: shelf_books
            scope: space
            fields:
              name: { type: string, nullable: false, maxLength: 200 }
              note: { type: string }

        """
    /// Adds `brand` (null by default) to books, and a collection of loans.
    static let v2 = v1.replacingOccurrences(of: "title: Shelf\n", with: "title: Shelf\nversion: 2\n")
        .replacingOccurrences(of: "      note: { type: string }\n", with: "      note: { type: string }\n      brand: { type: string }\n")
        + "  - name: shelf_loans\n    scope: space\n    fields:\n      who: { type: string, nullable: false }\n"
    /// Adds `copies`, which cannot be null, with a default.
    static let v3 = v2.replacingOccurrences(of: "version: 2\n", with: "version: 3\n")
        .replacingOccurrences(of: "      brand: { type: string }\n", with: "      brand: { type: string }\n      copies: { type: integer, nullable: false, default: 1 }\n")

    static func app(_ text: String) throws -> EventualApp { try AppDeclaration.read(text).get().app }

    @Test(arguments: Backend.available)
    func versionsSyncSideBySideAndNothingIsSkipped(_ backend: Backend) async throws {
        try await Self.onServer(backend, Self.run)
    }

    private static func run(server: URL, scratch: ScratchFolder, database: DatabaseLocation) async throws {
        let port = try #require(server.port)
        try await deploy(v1, version: 1, to: database, server: server)
        let p = try await registerUser(port: port, name: "p"), q = try await registerUser(port: port, name: "q")
        var a = try await ShelfDevice.signedIn(p, "a", at: server, scratch: scratch, app: app(v1))
        var b = try await ShelfDevice.signedIn(p, "b", at: server, scratch: scratch, app: app(v1))
        let c = try await ShelfDevice.signedIn(q, "c", at: server, scratch: scratch, app: app(v1))
        let space = try await shareSpace("Home", owner: a.link, member: c.link, memberEmail: q.email)

        // v1 everywhere: A makes two books in the shared space; B and C have them.
        try await a.insert("shelf_books", "b1", ["name": "Dune", "note": "hardback"], space: space)
        try await a.insert("shelf_books", "b2", ["name": "Emma"], space: space)
        #expect(await a.engine.syncNow().sent == 2)
        #expect(await b.engine.syncNow().pulled == 2)
        #expect(await c.engine.syncNow().pulled == 2)

        // B is upgraded to v2 before the server is: what uses v2 waits on B, what does not goes.
        b = try b.upgraded(to: app(v2))
        try await b.update("shelf_books", "b1", ["name": "Dune (1965)"])
        try await b.update("shelf_books", "b1", ["brand": "Ace"])
        try await b.update("shelf_books", "b2", ["brand": "Penguin"])
        try await b.insert("shelf_loans", "l1", ["who": "Ann"], space: space)
        let early = await b.engine.syncNow()
        #expect(early.sent == 1 && early.rejected == 0 && early.waitingForNewerApp == 3, "\(early)")
        #expect(early.newerAppMessage?.contains("this server serves version 1 of shelf, the device runs version 2") == true)
        #expect(try b.outbox.counts() == OutboxCounts(pending: 3, failed: 0), "kept, not failed")
        let again = await b.engine.syncNow()
        #expect(again.sent == 0 && again.rejected == 0 && again.waitingForNewerApp == 3, "not sent again in a loop: \(again)")

        // v2 is deployed; meanwhile A (still v1), offline, renames and makes a book.
        try await a.update("shelf_books", "b2", ["name": "Emma (Penguin)"])
        try await a.insert("shelf_books", "b3", ["name": "Ubik"], space: space)
        try await deploy(v2, version: 2, to: database, server: server)
        let released = await b.engine.syncNow()
        #expect(released.sent == 3 && released.waitingForNewerApp == 0 && released.rejected == 0, "sent once served: \(released)")
        #expect(await a.engine.syncNow().sent == 2)
        _ = await c.engine.syncNow()
        _ = await b.engine.syncNow()
        // A and C keep what they do not know, in the pages that moved their cursors.
        #expect(try a.kept("shelf_books", "b1") == ["brand": "Ace"] && a.kept("shelf_books", "b2") == ["brand": "Penguin"])
        #expect(try c.kept("shelf_books", "b1") == ["brand": "Ace"])
        #expect(try a.row("shelf_books", "b2")?["name"] == "Emma (Penguin)" && c.row("shelf_books", "b1")?["name"] == "Dune (1965)")
        #expect(try b.row("shelf_books", "b2")?["brand"] == "Penguin" && b.row("shelf_books", "b2")?["name"] == "Emma (Penguin)",
                "A's rename (v1) did not erase B's brand")

        // v3 is deployed. A edits offline and is upgraded to v3 (v2 skipped) with that change waiting;
        // its process is killed after the new columns were added and before the kept values were folded.
        try await deploy(v3, version: 3, to: database, server: server)
        try await a.update("shelf_books", "b3", ["name": "Ubik (1969)", "note": "signed"])
        try a.addColumnsAsAKilledUpgradeLeftThem(["brand TEXT", "copies INTEGER NOT NULL DEFAULT 1"])
        a = try a.upgraded(to: app(v3))
        // With no network: every brand B set is on A already, and `copies` holds its default.
        #expect(try a.row("shelf_books", "b1")?["brand"] == "Ace" && a.row("shelf_books", "b2")?["brand"] == "Penguin")
        #expect(try a.row("shelf_books", "b1")?["copies"] == .integer(1))
        #expect(try a.kept("shelf_books", "b1") == nil, "folded, no longer kept")
        #expect(try a.outbox.counts() == OutboxCounts(pending: 1, failed: 0))
        let upgradedSync = await a.engine.syncNow()
        #expect(upgradedSync.sent == 1 && upgradedSync.failure == nil, "\(upgradedSync)")
        #expect(upgradedSync.pulled == 1, "only the loan, which v1 never subscribed to: no book fetched again (\(upgradedSync.pulled))")
        #expect(try a.row("shelf_loans", "l1")?["who"] == "Ann")
        // A book made by C on v1 takes v3's default on the server.
        try await c.insert("shelf_books", "b4", ["name": "Middlemarch"], space: space)
        #expect(await c.engine.syncNow().sent == 1)

        // Everyone syncs: every change is applied (nothing failed, nothing waits), and all agree.
        for device in [a, b, c] { _ = await device.engine.syncNow() }
        for device in [a, b, c] { _ = await device.engine.syncNow() }
        let held = try await ShelfDevice.serverRecords(a.link)
        #expect(held["shelf_books/b4"]?["copies"] == .integer(1), "a v1 create takes the default: \(held["shelf_books/b4"] ?? [:])")
        for device in [a, b, c] {
            #expect(try device.outbox.counts() == OutboxCounts(pending: 0, failed: 0), "\(device.name)")
            try device.expectAgrees(with: held)
        }
        // A second run changes nothing.
        for device in [a, b, c] {
            let report = await device.engine.syncNow()
            #expect(report.sent == 0 && report.pulled == 0 && report.rejected == 0, "\(device.name): \(report)")
        }
        #expect(try await ShelfDevice.serverRecords(a.link) == held)
    }

    /// A device that kept nothing while it ran v1 (installed before keeping existed, or its kept
    /// data removed) and is upgraded to v3 gets from the server exactly what it lacks: the records
    /// of the added collection, and of the old ones only those holding a value of an added field
    /// other than null and its default, each with only those fields; its cursor stays, a field
    /// it set meanwhile stays its own, and in the end it agrees with the server.
    @Test(arguments: Backend.available)
    func aDeviceThatKeptNothingIsBackFilledByTheVersionItLastSynced(_ backend: Backend) async throws {
        try await Self.onServer(backend, Self.runBackFill)
    }

    private static func runBackFill(server: URL, scratch: ScratchFolder, database: DatabaseLocation) async throws {
        let port = try #require(server.port)
        try await deploy(v1, version: 1, to: database, server: server)
        let p = try await registerUser(port: port, name: "p"), q = try await registerUser(port: port, name: "q")
        var a = try await ShelfDevice.signedIn(p, "a", at: server, scratch: scratch, app: app(v1))
        var b = try await ShelfDevice.signedIn(p, "b", at: server, scratch: scratch, app: app(v1))
        let c = try await ShelfDevice.signedIn(q, "c", at: server, scratch: scratch, app: app(v1))
        let space = try await shareSpace("Home", owner: a.link, member: c.link, memberEmail: q.email)
        for (id, name) in [("b1", "Dune"), ("b2", "Emma"), ("b3", "Ubik")] {
            try await a.insert("shelf_books", id, ["name": .string(name)], space: space)
        }
        #expect(await a.engine.syncNow().sent == 3)
        _ = await b.engine.syncNow()
        _ = await c.engine.syncNow()

        // v2, then v3: B sets brands and copies; C (v1) makes a book that takes v3's default.
        try await deploy(v2, version: 2, to: database, server: server)
        b = try b.upgraded(to: app(v2))
        try await b.update("shelf_books", "b1", ["brand": "Ace"])
        try await b.update("shelf_books", "b2", ["brand": "Penguin"])
        try await b.insert("shelf_loans", "l1", ["who": "Ann"], space: space)
        try await deploy(v3, version: 3, to: database, server: server)
        b = try b.upgraded(to: app(v3))
        try await b.update("shelf_books", "b1", ["copies": 3])
        #expect(await b.engine.syncNow().sent == 4)
        try await c.insert("shelf_books", "b4", ["name": "Middlemarch"], space: space)
        #expect(await c.engine.syncNow().sent == 1)

        // A (v1) pulls all of it, then loses what it kept, as a device from before keeping would stand.
        #expect(await a.engine.syncNow().pulled == 3)
        try await a.forgetKept()
        #expect(try a.kept("shelf_books", "b1") == nil)

        // The server's back fill of v2's and v3's fields: the records that hold a value other than
        // null and the default (b4 holds the default, b3 nothing), each with only those fields.
        let fill = try await a.pull("collection=shelf_books&field=shelf_books.brand&field=shelf_books.copies")
        #expect(fill.status == 200)
        let filled = Dictionary(fill.records.map { ($0.recordId, $0.fields) }) { first, _ in first }
        #expect(filled == ["b1": ["brand": "Ace", "copies": 3], "b2": ["brand": "Penguin"]], "\(filled)")
        for (query, problem) in [("field=shelf_books.nope", "declares no field 'nope'"), ("field=nope.brand", "a deployed collection"),
                                 ("collection=shelf_loans&field=shelf_books.brand", "which the pull's collection values do not"),
                                 ("field=shelf_books.brand&field=shelf_books.brand", "named twice")] {
            let refused = try await a.pull(query)
            #expect(refused.status == 400 && refused.message.contains(problem), "\(query): \(refused.status) \(refused.message)")
        }

        // A is upgraded to v3 and, before it syncs, sets a brand of its own.
        a = try a.upgraded(to: app(v3))
        #expect(try a.row("shelf_books", "b1")?["brand"] == .null, "nothing kept: nothing folded")
        // NB: the loans' back fill is made by the first pull, when the grown subscription takes over the old one's cursor.
        let waiting = try a.backFills()
        #expect(waiting == ["backfill:shelf_books.brand,shelf_books.copies@p0:shelf_books,shelf_loans"], "\(waiting)")
        try await a.update("shelf_books", "b2", ["brand": "Mine"])
        let upgradedSync = await a.engine.syncNow()
        #expect(upgradedSync.sent == 1 && upgradedSync.failure == nil, "\(upgradedSync)")
        // NB: b2 comes twice, narrowed in the back fill and as A's own change: both are echoes.
        #expect(upgradedSync.pulled == 2 && upgradedSync.echoes == 2,
                "b1 narrowed and the loan, no other record again: \(upgradedSync.pulled) pulled, \(upgradedSync.echoes) echoes")
        #expect(try a.backFills().isEmpty, "a back fill goes when it is complete")
        #expect(try a.row("shelf_books", "b1")?["brand"] == "Ace" && a.row("shelf_books", "b1")?["copies"] == .integer(3))
        #expect(try a.row("shelf_books", "b1")?["name"] == "Dune", "the other fields stay")
        #expect(try a.row("shelf_books", "b2")?["brand"] == "Mine", "a field set on the device stays its own")
        #expect(try a.row("shelf_loans", "l1")?["who"] == "Ann")

        for device in [a, b, c] { _ = await device.engine.syncNow() }
        let held = try await ShelfDevice.serverRecords(a.link)
        #expect(held["shelf_books/b2"]?["brand"] == "Mine")
        for device in [a, b, c] {
            #expect(try device.outbox.counts() == OutboxCounts(pending: 0, failed: 0), "\(device.name)")
            try device.expectAgrees(with: held)
        }
        let second = await a.engine.syncNow()
        #expect(second.sent == 0 && second.pulled == 0, "a second run changes nothing: \(second)")
        // Reopened, the back fill is not asked for again.
        a = try a.upgraded(to: app(v3))
        #expect(try a.backFills().isEmpty)
    }

    /// A back fill queued by one upgrade outlives a second upgrade before the device syncs, one
    /// that changes its subscription (a new collection): it is queued again, not lost.
    @Test(arguments: Backend.available)
    func aBackFillOutlivesASecondUpgradeBeforeASync(_ backend: Backend) async throws {
        try await Self.onServer(backend, Self.runTwoUpgrades)
    }

    /// v1 and `brand`, without the loans.
    static let brandOnly = v1.replacingOccurrences(of: "title: Shelf\n", with: "title: Shelf\nversion: 2\n")
        .replacingOccurrences(of: "      note: { type: string }\n", with: "      note: { type: string }\n      brand: { type: string }\n")
    /// `brandOnly` and the loans, as version 3.
    static let brandAndLoans = v2.replacingOccurrences(of: "version: 2\n", with: "version: 3\n")

    private static func runTwoUpgrades(server: URL, scratch: ScratchFolder, database: DatabaseLocation) async throws {
        let port = try #require(server.port)
        try await deploy(v1, version: 1, to: database, server: server)
        let p = try await registerUser(port: port, name: "p")
        var a = try await ShelfDevice.signedIn(p, "a", at: server, scratch: scratch, app: app(v1))
        var b = try await ShelfDevice.signedIn(p, "b", at: server, scratch: scratch, app: app(v1))
        try await a.insert("shelf_books", "b1", ["name": "Dune"], space: nil)
        #expect(await a.engine.syncNow().sent == 1)
        try await deploy(brandOnly, version: 2, to: database, server: server)
        _ = await b.engine.syncNow()
        b = try b.upgraded(to: app(brandOnly))
        try await b.update("shelf_books", "b1", ["brand": "Ace"])
        #expect(await b.engine.syncNow().sent == 1)
        try await deploy(brandAndLoans, version: 3, to: database, server: server)
        #expect(await a.engine.syncNow().pulled == 1)
        try await a.forgetKept()

        // Two upgrades, offline: the first queues the brand's back fill, the second changes the subscription.
        a = try a.upgraded(to: app(brandOnly))
        #expect(try a.backFills() == ["backfill:shelf_books.brand@p0:shelf_books"])
        a = try a.upgraded(to: app(brandAndLoans))
        let report = await a.engine.syncNow()
        #expect(report.failure == nil, "\(report)")
        #expect(try a.row("shelf_books", "b1")?["brand"] == "Ace", "the brand's back fill, queued again with the grown subscription")
        #expect(try a.backFills().isEmpty)
    }

    /// Runs `body` against a real server on a scratch database of `backend`, removed after.
    private static func onServer(_ backend: Backend,
                                 _ body: @escaping @Sendable (URL, ScratchFolder, DatabaseLocation) async throws -> Void) async throws {
        let database = try await ScratchDatabase.make(backend)
        do {
            try await withLiveServer(configure: { $0.database = database.location }) { server, scratch in
                try await body(server, scratch, database.location)
            }
            await database.remove()
        } catch {
            await database.remove()
            throw error
        }
    }

    /// Deploys `text` to the server's database and waits until the running server serves it.
    private static func deploy(_ text: String, version: Int, minimum: Int = 1, to location: DatabaseLocation, server: URL,
                               app: String = "shelf") async throws {
        _ = try await deployApp(text, to: location)
        let link = ServerLink(serverURL: server, timeouts: .patient) { nil }
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if case .ok(let ok) = try await link.client.getApp(path: .init(appId: app)), try ok.body.json.version == version,
               try (ok.body.json.minimumVersion ?? 1) == minimum { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestFailure("the server did not take up version \(version) (minimum \(minimum)) within 20 s")
    }

    /// A device of a version below the app's minimum is told to update the app, once, for that
    /// app only: what it has to send stays, its person's other app syncs on, a device from before
    /// versions (naming no app) is told the same, and once updated it sends what waited.
    @Test(arguments: Backend.available)
    func aDeviceBelowTheMinimumIsToldToUpdateAndKeepsWhatItHasToSend(_ backend: Backend) async throws {
        try await Self.onServer(backend, Self.runMinimum)
    }

    static let den = """
        id: den
        title: Den
        collections:
          - name: den_notes
            scope: person
            fields:
              text: { type: string, nullable: false }

        """

    private static func runMinimum(server: URL, scratch: ScratchFolder, database: DatabaseLocation) async throws {
        let port = try #require(server.port)
        try await deploy(v1, version: 1, to: database, server: server)
        try await deploy(den, version: 1, to: database, server: server, app: "den")
        let p = try await registerUser(port: port, name: "p")
        var a = try await ShelfDevice.signedIn(p, "a", at: server, scratch: scratch, app: app(v1))
        let notes = try await ShelfDevice.signedIn(p, "notes", at: server, scratch: scratch, app: app(den))
        try await a.insert("shelf_books", "b1", ["name": "Dune"], space: nil)
        #expect(await a.engine.syncNow().sent == 1)

        // A minimum above the version is refused where it is written.
        let tooHigh = v2.replacingOccurrences(of: "version: 2\n", with: "version: 2\nminimumVersion: 3\n")
        guard case .failure(let problems) = AppDeclaration.read(tooHigh) else { throw TestFailure("a minimum above the version was read") }
        #expect(problems.problems.map(\.place) == ["minimumVersion"], "\(problems)")

        // v2, then v2 again with only its minimum raised: the same version may come again so.
        try await deploy(v2, version: 2, to: database, server: server)
        let v2Only = v2.replacingOccurrences(of: "version: 2\n", with: "version: 2\nminimumVersion: 2\n")
        try await deploy(v2Only, version: 2, minimum: 2, to: database, server: server)

        // A (v1), offline meanwhile, renamed the book: told once to update, its change kept.
        try await a.update("shelf_books", "b1", ["name": "Dune (1965)"])
        let refused = await a.engine.syncNow()
        guard case .upgradeRequired(let message)? = refused.failure else { throw TestFailure("not told to update: \(refused)") }
        #expect(message.contains("version 1 of Shelf is no longer synced here (the oldest is 2)"), "\(message)")
        #expect(refused.failure?.description.hasPrefix("Update the app to sync") == true)
        #expect(try a.outbox.counts() == OutboxCounts(pending: 1, failed: 0), "kept, not failed")
        let again = await a.engine.syncNow()
        #expect(again.failure == refused.failure && again.sent == 0 && again.pulled == 0, "asked no more in a loop: \(again)")
        #expect(try a.outbox.counts() == OutboxCounts(pending: 1, failed: 0))

        // The person's other app syncs on.
        try await notes.insert("den_notes", "n1", ["text": "milk"], space: nil)
        let other = await notes.engine.syncNow()
        #expect(other.sent == 1 && other.failure == nil, "\(other)")

        // A device from before versions names no app: it runs version 1 of the app its collections name.
        let push = #"{"changes":[{"id":"c-old","collection":"shelf_books","recordId":"b9","hlc":"\#(HLCStamp(millis: UnixMillis.now(), counter: 0, node: "0011223344556677"))","fields":{"name":"Old"},"deleted":false}]}"#
        let (pushed, pushBody) = try await a.link.send(.post, "/v1/sync/push", json: Data(push.utf8), operationID: "syncPush")
        #expect(pushed.status.code == 409 && String(decoding: pushBody, as: UTF8.self).contains("upgrade_required"),
                "\(pushed.status) \(String(decoding: pushBody, as: UTF8.self))")
        for (query, status) in [("collection=shelf_books", 409), ("collection=shelf_books&app=shelf@1", 409),
                                ("collection=shelf_books&app=shelf@2", 200), ("collection=den_notes", 200),
                                // Naming another app, or no collection (every one), gets past no minimum.
                                ("collection=shelf_books&app=den@1", 409), ("app=den@1", 409), ("", 409),
                                ("collection=den_notes&app=nope@1", 404),
                                ("app=shelf@0", 400), ("app=shelf@9999999", 400), ("app=shelf", 400)] {
            let answer = try await a.pull(query)
            #expect(answer.status == status, "\(query): \(answer.status) \(answer.message)")
        }

        // The v2 file without its minimum, deployed again, would lower it: refused unless said.
        do {
            _ = try await deployApp(v2, to: database)
            throw TestFailure("a deploy that lowers the minimum was taken")
        } catch let refusal as DeployedApps.Refusal {
            #expect(refusal.problems.map(\.place) == ["minimumVersion"] && refusal.description.contains("--lower-minimum"), "\(refusal)")
        }

        // Updated, A sends what waited.
        a = try a.upgraded(to: app(v2))
        let updated = await a.engine.syncNow()
        #expect(updated.sent == 1 && updated.failure == nil, "\(updated)")
        #expect(try a.outbox.counts() == OutboxCounts(pending: 0, failed: 0))
        #expect(try await ShelfDevice.serverRecords(a.link)["shelf_books/b1"]?["name"] == "Dune (1965)")
    }
}

/// A device of the shelf app at one version: its store, engine and the person's sign-in, which
/// outlive an upgrade (`upgraded(to:)` opens the same store with the new version's collections).
struct ShelfDevice {
    let name: String
    let folder: URL
    let vault: SessionVault
    let link: ServerLink
    let app: EventualApp
    let store: LocalStore
    let engine: SyncEngine
    var outbox: Outbox { Outbox(store: store) }

    static func signedIn(_ person: (email: String, password: String), _ name: String, at server: URL, scratch: ScratchFolder,
                         app: EventualApp) async throws -> ShelfDevice {
        let folder = scratch.url.appendingPathComponent(name)
        let vault = SessionVault(secrets: FileSecretStore(directory: folder.appendingPathComponent("secrets")), rounds: 100_000)
        let link = ServerLink(serverURL: server, timeouts: .patient) { vault.accessToken }
        try await vault.signIn(email: person.email, password: person.password, client: link.client)
        return try ShelfDevice(name: name, folder: folder, vault: vault, link: link, app: app)
    }

    private init(name: String, folder: URL, vault: SessionVault, link: ServerLink, app: EventualApp) throws {
        self.name = name
        self.folder = folder
        self.vault = vault
        self.link = link
        self.app = app
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // NB: the app declares its tables by its collections: the engine makes and widens them.
        store = try LocalStore(path: folder.appendingPathComponent("store.sqlite").path)
        var configuration = SyncConfiguration.fast
        configuration.app = app
        engine = SyncEngine(store: store, link: link, collections: app.collections.map { TableMirror($0, table: $0.name) },
                            configuration: configuration, logger: Logger(label: "test-shelf-\(name)"))
    }

    /// The same device after its app was upgraded to `app`.
    func upgraded(to app: EventualApp) throws -> ShelfDevice {
        try ShelfDevice(name: name, folder: folder, vault: vault, link: link, app: app)
    }

    /// What a migration leaves when the process is killed before anything else: the columns, no value in them.
    func addColumnsAsAKilledUpgradeLeftThem(_ columns: [String]) throws {
        let queue = try DatabaseQueue(path: folder.appendingPathComponent("store.sqlite").path)
        try queue.write { db in
            for column in columns { try db.execute(sql: "ALTER TABLE shelf_books ADD COLUMN \(column)") }
        }
        try queue.close()
    }

    private func mirror(_ collection: String) -> TableMirror { TableMirror(app.collection(collection), table: collection) }

    func insert(_ collection: String, _ id: String, _ fields: [String: SyncValue], space: String?) async throws {
        let mirror = mirror(collection)
        try await store.write { tx in try mirror.insert(id, fields, space: space, in: tx) }
    }

    func update(_ collection: String, _ id: String, _ fields: [String: SyncValue]) async throws {
        let mirror = mirror(collection)
        try await store.write { tx in try mirror.update(id, setting: fields, in: tx) }
    }

    /// Removes what the device kept, as a device from before keeping would stand (`KeptFields.forgetAll`).
    func forgetKept() async throws {
        let mirrors = app.collections.map { TableMirror($0, table: $0.name) }
        try await store.writer.write { db in try KeptFields.forgetAll(knowing: mirrors, db) }
    }

    /// The keys of the back fills waiting.
    func backFills() throws -> [String] {
        try store.reader.read { db in
            try String.fetchAll(db, sql: "SELECT key FROM eventual_subscriptions WHERE key LIKE 'backfill:%' ORDER BY key")
        }
    }

    /// A pull with `query`: its status, its records and the message of a refusal.
    func pull(_ query: String) async throws -> (status: Int, records: [SyncWire.PulledRecord], message: String) {
        let (response, body) = try await link.send(.get, "/v1/sync/pull?" + query, json: nil, operationID: "syncPull")
        let records = response.status == .ok ? try JSONDecoder().decode(SyncWire.PulledPage.self, from: body).changes : []
        return (Int(response.status.code), records, String(decoding: body, as: UTF8.self))
    }

    func row(_ collection: String, _ id: String) throws -> [String: SyncValue]? {
        try store.reader.read { db in try mirror(collection).fieldsOfRow(id, db) }
    }

    func kept(_ collection: String, _ id: String) throws -> [String: SyncValue]? {
        try store.reader.read { db in
            try String.fetchOne(db, sql: "SELECT fields FROM eventual_kept WHERE collection = ? AND record_id = ?", arguments: [collection, id])
        }.map { try JSONDecoder().decode([String: SyncValue].self, from: Data($0.utf8)) }
    }

    /// Every record the server holds for the person, `collection/id` to its fields, by a pull from nothing.
    static func serverRecords(_ link: ServerLink) async throws -> [String: [String: SyncValue]] {
        // NB: as the newest version of the app: a pull naming none is version 1, below a raised minimum.
        let (response, body) = try await link.send(.get, "/v1/sync/pull?limit=1000&app=shelf@3", json: nil, operationID: "syncPull")
        guard response.status == .ok else { throw TestFailure("pull: \(response.status)") }
        let page = try JSONDecoder().decode(SyncWire.PulledPage.self, from: body)
        return Dictionary(page.changes.filter { !$0.deleted }.map { ("\($0.collection)/\($0.recordId)", $0.fields) }) { first, _ in first }
    }

    /// Each record of the server this device's version declares, field by field as it declares
    /// them (a field the server's record lacks holds its default, else null), and the rest kept.
    func expectAgrees(with server: [String: [String: SyncValue]], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for (key, fields) in server.sorted(by: { $0.key < $1.key }) {
            let parts = key.split(separator: "/").map(String.init)
            guard let collection = app.collections.first(where: { $0.name == parts[0] }) else { continue }
            let row = try row(parts[0], parts[1])
            #expect(row != nil, "\(name) holds \(key)", sourceLocation: sourceLocation)
            for (field, declared) in collection.fields {
                let expected = fields[field] ?? declared.defaultValue ?? .null
                #expect(row?[field].map { $0.sameValue(as: expected) } == true,
                        "\(name) \(key).\(field): \(row?[field] ?? .null), the server \(expected)", sourceLocation: sourceLocation)
            }
            let unknown = fields.filter { collection.fields[$0.key] == nil }
            if !unknown.isEmpty {
                #expect(try kept(parts[0], parts[1]) == unknown, "\(name) keeps \(key)'s \(unknown.keys.sorted())", sourceLocation: sourceLocation)
            }
        }
    }
}

extension SyncValue {
    /// The same value, a whole number read back as a number or not.
    func sameValue(as other: SyncValue) -> Bool {
        if self == other { return true }
        if let left = doubleValue, let right = other.doubleValue { return left == right }
        return false
    }
}
