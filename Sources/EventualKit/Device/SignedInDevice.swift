import EventualAPI
import Foundation
import GRDB
import Logging

/// The signed-in person on this device, as every app has them: their store, the sync engine,
/// usage events and the outbox, built once; sending and fetching, the status, and what to do
/// with a change the server refused. An app's user type holds one and adds its own model.
public final class SignedInDevice: Sendable {
    public let session: Session
    public let store: LocalStore
    public let engine: SyncEngine
    /// Usage events for the product team's questions (off with `DeviceConfiguration.analyticsEnabled`).
    public let analytics: Analytics
    public let accounts: DeviceAccounts
    /// Photos and files attached to records: kept here, uploaded through the outbox, read local first.
    public let attachments: Attachments
    /// The server's time as best known (`clock.now()`), saved by the engine from every answer of
    /// the link and trusted in a later process while this device's clock runs on from it.
    public let clock: DeviceClock
    public var configuration: DeviceConfiguration { accounts.configuration }
    public var link: ServerLink { accounts.link }
    public var outbox: Outbox { Outbox(store: store) }
    /// Whether the server answers, and what this process found of it (`checkOnce(within:)`).
    public var connectivity: ConnectivityMonitor { engine.connectivity }
    /// The spaces the person shares with others: creating, inviting, joining, leaving.
    public var spaces: Spaces {
        // NB: a first list of invitations or members is worth the link's own deadlines (a refused
        // connection answers at once); with a copy to show, a command's local budget.
        let connectivity = self.connectivity
        return Spaces(store: store, username: session.username, client: link.client,
                      patience: configuration.timeouts.connect + configuration.timeouts.firstByte,
                      localBudget: configuration.localCommandSyncBudget, app: app.name, connectivity: connectivity)
    }
    var app: DeviceApp { accounts.app }

    /// Opens the person's store (creating it if need be) and builds the engine around it.
    /// `wallClock`: the clock the store stamps changes by (a test sets a wrong one).
    /// `subscriptions`: what the device pulls, by priority (nil: every collection of `collections` at once).
    public convenience init(session: Session, accounts: DeviceAccounts, collections: [any SyncedCollectionStore] = [],
                            subscriptions: [SyncSubscription]? = nil, calls: [String: CallHandler] = [:],
                            wallClock: @escaping @Sendable () -> Int64 = { UnixMillis.now() }) throws {
        let store = try Self.store(of: session, accounts: accounts, wallClock: wallClock)
        self.init(session: session, store: store, accounts: accounts, collections: collections, subscriptions: subscriptions, calls: calls)
    }

    /// Builds the engine around a store the app opened itself (`store(of:accounts:)`), for calls
    /// that need the store (or `clock`, the store's `DeviceClock`) before the engine exists.
    public init(session: Session, store: LocalStore, accounts: DeviceAccounts, clock: DeviceClock? = nil,
                collections: [any SyncedCollectionStore] = [], subscriptions: [SyncSubscription]? = nil,
                calls: [String: CallHandler] = [:]) {
        self.session = session
        self.store = store
        self.accounts = accounts
        let configuration = accounts.configuration
        var logger = Logger(label: "\(accounts.app.analyticsName.rawValue).sync")
        logger.logLevel = configuration.engineLogLevel
        analytics = Analytics(store: store, app: accounts.app.analyticsName.rawValue, appVersion: accounts.app.version,
                              isEnabled: configuration.analyticsEnabled, logger: logger)
        var sync = configuration.sync
        sync.sendsAnalytics = sync.sendsAnalytics && configuration.analyticsEnabled
        sync.app = accounts.app.registration
        attachments = Attachments(folder: Self.attachmentsFolder(of: session, accounts: accounts), store: store, link: accounts.link)
        self.clock = clock ?? DeviceClock(store: store)
        self.clock.listen(to: accounts.link.serverTime)
        engine = SyncEngine(store: store, link: accounts.link, collections: collections, subscriptions: subscriptions,
                            calls: calls.merging(attachments.uploads) { _, engine in engine }, configuration: sync, logger: logger,
                            removeFiles: attachments.removeFiles)
    }

    /// Where the person's attachments are kept: beside their store, so that a sign-out removes both.
    public static func attachmentsFolder(of session: Session, accounts: DeviceAccounts) -> URL {
        URL(fileURLWithPath: accounts.configuration.databasePath(session.userID)).deletingLastPathComponent()
            .appendingPathComponent("attachments", isDirectory: true)
    }

    /// The person's store, with the app's tables.
    public static func store(of session: Session, accounts: DeviceAccounts,
                             wallClock: @escaping @Sendable () -> Int64 = { UnixMillis.now() }) throws -> LocalStore {
        try LocalStore(path: accounts.configuration.databasePath(session.userID), migrations: accounts.app.migrations, wallClock: wallClock)
    }

    // MARK: - Status

    /// Online or offline (asking the server for at most the local budget, unless `probe` is
    /// false), what waits and why, and when the last sync was.
    public func status(probe: Bool = true) async throws -> DeviceStatus {
        let monitor = engine.connectivity
        let connectivity = probe ? await monitor.check(within: configuration.localCommandSyncBudget) : monitor.current
        return try await status(connectivity: connectivity)
    }

    /// The status, with connectivity as the app found it.
    public func status(connectivity: Connectivity) async throws -> DeviceStatus {
        // NB: what every start records for itself (SpendiQ's "last visit") is no work of the
        // person's: listed, it would always wait, as it holds no sign-out back. Nor is the fetch
        // of a record's server version after a settle (the settle says what it shows).
        let lines = try outbox.entries().filter { $0.operation != RecordRefetch.operation && app.isPersonsWork($0) }.map(line)
        await engine.refreshStatus()
        return DeviceStatus(connectivity: connectivity, pending: lines.filter { $0.state == .pending }.count,
                            failed: lines.filter { $0.state == .failed }.count, entries: lines,
                            lastSyncAt: engine.currentStatus.lastSyncAt.map(onThisClock),
                            pendingRevocations: (try? accounts.vault.pendingRevocations().count) ?? 0,
                            firstSync: engine.currentStatus.firstSync, attachmentsWaiting: (try? attachments.waiting()) ?? (0, 0))
    }

    /// A time the engine stamped by the server's clock (the last sync), on this device's clock as
    /// it runs now: "last sync just now" after a sync, whether this clock is slow, fast or was
    /// corrected since; a time from before any answer stays as stamped.
    private func onThisClock(_ serverTime: Int64) -> Int64 {
        guard let offset = clock.offset(), abs(offset) > DeviceClock.tolerance.milliseconds else { return serverTime }
        return serverTime - offset
    }

    /// An outbox entry in the app's words (a space call in the engine's; an upload names the
    /// record its attachment belongs to).
    public func line(_ entry: OutboxEntry) throws -> OutboxLine {
        if let owners = try owners(ofUpload: entry), let size = AttachmentUpload.summary(of: entry, saying: "\(owners.field) of \(owners.records)") {
            return OutboxLine(entry: entry, summary: size, upload: owners)
        }
        return OutboxLine(entry: entry, summary: try SpaceCall.summary(of: entry, username: session.username, noun: app.spaceNoun, store: store)
            ?? AttachmentUpload.summary(of: entry) ?? RecordRefetch.summary(of: entry) ?? app.summary(entry, store))
    }

    /// While a first sync has still to bring records, how far it is (summed over priorities):
    /// a view that adds records up is short meanwhile; nil once every subscription has them all.
    public func firstSyncUnderWay() async -> PullProgress? {
        await engine.refreshStatus()
        return PullProgress.underWay(engine.currentStatus.firstSync)
    }

    // MARK: - Sending

    /// Sends what waits and, with `pull`, fetches what other devices sent, now: the one way an
    /// app syncs on demand. `wait` says how long the caller waits (`SyncWait`); a round that
    /// outlives it goes on in the background (the report is not `finished`) and what it has not
    /// sent stays queued. `progress` hears how many entries are left, about ten times a second,
    /// while it waits. After a round that reached the server, the sign-outs that wait are sent;
    /// a refused token locks the session.
    @discardableResult
    public func sync(_ wait: SyncWait = .untilDone, pull: Bool = true,
                     progress: (@Sendable (_ remaining: Int, _ total: Int) -> Void)? = nil) async -> SyncReport {
        var budget: Duration?
        switch wait {
        case .untilDone: budget = nil
        case .localBudget: budget = configuration.localCommandSyncBudget
        case .atMost(let duration): budget = duration
        case .patient, .serverAnswer:
            let patience = if case .patient(let patience) = wait { patience } else { configuration.timeouts.connect + configuration.timeouts.firstByte }
            // NB: ask first whether the server answers at all (not again when this process found
            // it silent), so that a dead or silent one costs a moment, not a patience kept for a slow answer.
            guard await connectivity.checkOnce(within: configuration.localCommandSyncBudget) == .online else {
                var report = SyncReport()
                report.failure = .unreachable(connectivity.foundSilent ? "The server is not answering" : "No connection to the server")
                return report
            }
            budget = patience
        }
        let total = (try? outbox.counts().pending) ?? 0
        let watcher: Task<Void, Never>? = progress.map { progress in
            let outbox = self.outbox
            return Task {
                while !Task.isCancelled {
                    progress((try? outbox.counts().pending) ?? 0, total)
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
        }
        let report = await engine.syncNow(pull: pull, waitingAtMost: budget)
        watcher?.cancel()
        await watcher?.value
        progress?((try? outbox.counts().pending) ?? 0, total)
        if report.finished, report.failure == nil { await accounts.flushRevocations() }
        if case .unauthorized = report.failure { try? accounts.vault.tokenRejected() }
        return report
    }

    // MARK: - Rows and their sync state

    /// A live query of a mirrored table: its rows, each with its sync state, now and after every
    /// committed change of them (`LocalStore.observe`); iterate it for a list that follows syncs.
    public func observe<Row: Sendable & Equatable>(
        _ mirror: TableMirror, alsoTracking tables: [String] = [], id: @escaping @Sendable (Row) -> String,
        fetch: @escaping @Sendable (GRDB.Database) throws -> [Row]
    ) -> AsyncThrowingStream<LiveSnapshot<Row>, any Error> {
        store.observe(mirror, alsoTracking: tables, id: id, fetch: fetch)
    }

    /// The sync state of each of `ids` (records of `collection`), for a list printed once.
    public func syncStates(_ collection: SyncCollection, ids: some Collection<String> & Sendable) throws -> [String: SyncState] {
        try store.syncStates(collection, ids: ids)
    }

    /// The changes the server refused, oldest first, with what it said (calls that failed are in `status()`).
    public func failures() throws -> [FailedChange] {
        try engine.failures()
    }

    /// Settles a refused change (`SyncEngine.settle`); a change kept is sent at once and waited
    /// for when the server answers (`sendWhileWaitedFor`), else it goes with the next sync. A
    /// change dropped asks the server for its version of the record at once too, so that the
    /// settle can say what the row shows (`Settlement.fetched`).
    @discardableResult
    public func settle(_ id: String, _ choice: SettleChoice) async throws -> Settlement {
        var settlement = try await engine.settle(id, choice)
        // NB: and fetched: a record another device deleted comes back here only with a pull.
        if settlement.queued != nil {
            await sendWhileWaitedFor(pulling: true)
        } else if try refetchWaits(settlement.change.recordID) {
            await sync(.localBudget, pull: false)
            settlement.fetched = try !refetchWaits(settlement.change.recordID)
        }
        return settlement
    }

    /// Whether the fetch of the server's version of `recordID` still waits in the outbox.
    private func refetchWaits(_ recordID: String) throws -> Bool {
        try outbox.entries().contains { entry in
            entry.operation == RecordRefetch.operation
                && (try? JSONDecoder().decode(RecordRefetch.Payload.self, from: entry.payload))?.recordId == recordID
        }
    }

    /// Sends what a person is waiting to hear about (a change kept or retried: refused again or
    /// not?), waiting as long as a request may wait for the server's first byte: an unreachable
    /// server is said at once, a silent one after that wait, and the entry then goes with the
    /// next sync. A `patience` longer than that (a scan's classification) is given only to a
    /// server that answers within the local budget.
    private func sendWhileWaitedFor(patience: Duration? = nil, pulling: Bool = false) async {
        let wait = max(configuration.localCommandSyncBudget, configuration.timeouts.firstByte)
        if let patience, patience > wait {
            await sync(.patient(patience), pull: pulling)
        } else {
            await sync(.atMost(wait), pull: pulling)
        }
    }

    // MARK: - Refused changes

    /// Queues a change the server refused again and sends it at once, waited for, if the server
    /// answers within the local budget (`sendWhileWaitedFor`), else with the next sync. `id` is the entry's id or its last 8
    /// characters. `patience` may give an entry longer, once the server answered (a scan waits
    /// for its classification).
    public func retry(_ id: String, patience: @Sendable (OutboxEntry) -> Duration? = { _ in nil }) async throws
        -> (line: OutboxLine, outcome: RetryOutcome) {
        let entry = try await outbox.retry(id)
        let line = try line(entry)
        await sendWhileWaitedFor(patience: patience(entry))
        guard let now = try outbox.entries().first(where: { $0.id == entry.id }) else { return (line, .sent) }
        return (line, now.state == .failed ? .refused(now.lastError ?? "no reason given") : .waiting)
    }

    /// Drops a change the server refused, for good (`id` as for `retry`). `undo` first takes back
    /// what the change had done on this device that the server's version will not restore. A
    /// refused upload's records no longer refer to its attachment: a change clears each field
    /// (`OutboxLine.upload` says which), so that no device waits for a file that never comes.
    @discardableResult
    public func discard(_ id: String, undo: (@Sendable (OutboxEntry) async throws -> Void)? = nil) async throws -> OutboxLine {
        let entry = try outbox.failedEntry(id)
        let line = try line(entry)
        // NB: undone before the entry goes: were the process killed in between, the refused entry
        // would still be listed and could be discarded again.
        try await undo?(entry)
        if let owners = line.upload { try await dropReferences(owners) }
        try await outbox.discard(entry.id)
        return line
    }
}
