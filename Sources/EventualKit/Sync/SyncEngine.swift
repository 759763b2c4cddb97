import EventualAPI
import Foundation
import GRDB
import Logging
import OpenAPIRuntime

/// Moves the outbox to the server and the server's changes into the local store: push, then
/// pull. It runs when a local write lands, when connectivity returns, when the server signals a
/// change on the live channel, on a timer (which also drives retries, never only the next write,
/// and is the fallback while the live channel is down), and on demand with `syncNow()`. Each run
/// is a `SyncRound`; the engine keeps the status and what outlives a round.
public actor SyncEngine {
    public let store: LocalStore
    public let link: ServerLink
    public let connectivity: ConnectivityMonitor
    let collections: [String: any SyncedCollectionStore]
    /// What the device pulls, by priority (see `SyncSubscription`).
    public nonisolated let subscriptions: [SyncSubscription]
    private let calls: [String: CallHandler]
    private let configuration: SyncConfiguration
    private let logger: Logger
    /// Removes the files of attachments forgotten with a space the person left (`Attachments.removeFiles`).
    private let removeFiles: @Sendable ([String]) -> Void
    private let statusBroadcast = Broadcast(SyncStatus())

    private var current: Task<SyncReport, Never>?
    private var loop: Task<Void, Never>?
    private var listeners: [Task<Void, Never>] = []
    /// The live channel's task while the engine runs (`LiveLink`).
    private var live: Task<Void, Never>?
    /// Tells the live channel, while it waits to reconnect, that a round reached the server.
    private var liveNudge: LiveNudge?
    /// How often a background round runs when nothing else asks and the live channel is down
    /// (`start(every:)`; the configuration's when nil).
    private var chosenInterval: Duration?
    private var interval: Duration { chosenInterval ?? configuration.interval }
    private var isLive = false
    /// The newest position the live channel signalled in each space, and the newest a finished
    /// pull is known to have covered: a signal at or below the covered one starts nothing.
    private var signalled: [String: Int64] = [:]
    private var covered: [String: Int64] = [:]
    /// Rounds in a row that failed to pull what was signalled.
    private var signalledPullFailures = 0
    private var doorbell: CheckedContinuation<Void, Never>?
    private var rang = false
    /// Why the timer's wait must be set again before it ends (nil: it need not).
    private var retime: Retime?
    private enum Retime {
        /// The live channel dropped while the engine waited on a timer set for a live channel.
        case channelDropped
        /// Another process queued a change, due before the timer.
        case outboxChanged
    }
    private var pausedForSignIn = false
    /// The server's words when it answered that this version of the app no longer syncs, and
    /// when to ask again (an operator may lower the minimum): until then a round asks nothing.
    private var upgradeRequired: (message: String, askAgainAt: ContinuousClock.Instant)?
    /// How long a device told to update its app waits before it asks the server again.
    static let upgradeRecheck: Duration = .seconds(600)
    /// Whether a round left changes claimed that it could not record an answer for (the device
    /// could not save it) and could not put back then either: the next round puts them back first.
    private var leftClaimed = false
    private var offlineSinceLastDelivery = false
    /// The network came back: what waited out a backoff while it was gone goes in the next round,
    /// all together, instead of trickling out as each entry's own backoff ends.
    private var networkReturned = false
    /// When the server said it cannot file usage events before (its Retry-After, or a minute).
    private var eventsNotBefore: ContinuousClock.Instant?

    public init(
        store: LocalStore,
        link: ServerLink,
        connectivity: ConnectivityMonitor? = nil,
        collections: [any SyncedCollectionStore] = [],
        subscriptions: [SyncSubscription]? = nil,
        calls: [String: CallHandler] = [:],
        configuration: SyncConfiguration = SyncConfiguration(),
        logger: Logger = Logger(label: "eventual.sync"),
        removeFiles: @escaping @Sendable (_ sha256s: [String]) -> Void = { _ in }
    ) {
        self.removeFiles = removeFiles
        self.store = store
        self.link = link
        let client = link.client
        self.connectivity = connectivity ?? ConnectivityMonitor {
            (try? await client.getHealth()).map { if case .ok = $0 { true } else { false } } ?? false
        }
        self.collections = Dictionary(uniqueKeysWithValues: collections.map { ($0.collection.name, $0) })
        let names = collections.map(\.collection.name).sorted()
        self.subscriptions = subscriptions ?? (names.isEmpty ? [] : [.all(names)])
        // NB: a subscription to a collection the device does not mirror would download records it
        // drops, and one the subscriptions leave out would never arrive: the app's mistake.
        precondition(Set(self.subscriptions.flatMap(\.collections)) == Set(names),
                     "the subscriptions must name every synced collection of the app, and only those")
        let mirrors = collections.compactMap { $0 as? TableMirror }
        store.register(mirrors)
        Self.upgrade(mirrors, subscriptions: self.subscriptions, in: store, logger: logger)
        self.calls = calls.merging(SpaceCall.handlers) { _, engine in engine }
            .merging([RecordRefetch.operation: RecordRefetch.handler(collections: self.collections, link: link)]) { _, engine in engine }
        self.configuration = configuration
        self.logger = logger
    }

    // MARK: - Status

    /// The status now and every change after it.
    public nonisolated var status: AsyncStream<SyncStatus> { statusBroadcast.stream() }
    public nonisolated var currentStatus: SyncStatus { statusBroadcast.current }

    /// Recounts the outbox and publishes the status.
    public func refreshStatus() {
        let counts = (try? store.reader.read { db in try OutboxTable.counts(db) }) ?? OutboxCounts()
        let lastSync = try? store.reader.read { db in try EngineSchema.value(.lastSyncAt, db).flatMap { Int64($0) } }
        let subscriptions = self.subscriptions
        let firstSync = (try? store.reader.read { db in try SubscriptionTable.progress(of: subscriptions, db: db) }) ?? []
        let connectivity = connectivity.current
        let paused = pausedForSignIn
        let isLive = isLive
        statusBroadcast.update { status in
            status.isLive = isLive
            status.firstSync = firstSync
            status.pending = counts.pending
            status.failed = counts.failed
            status.connectivity = connectivity
            status.needsSignIn = paused
            status.lastSyncAt = lastSync ?? nil
        }
    }

    /// Returns once every subscription of `priority` and the more urgent ones has pulled
    /// everything once (at once if they have), or when the task is cancelled. The rest goes on
    /// loading: SpendiQ shows its dashboard after priority 0.
    public nonisolated func synced(priority: Int) async {
        for await status in status where status.hasSynced(priority: priority) { return }
    }

    // MARK: - Running in the background

    /// Starts syncing in the background: on local writes, when connectivity returns, when the
    /// live channel signals a change (see `SyncConfiguration.live`), and on a timer: every
    /// `interval` (the configuration's when nil) while the live channel is down.
    public func start(every interval: Duration? = nil) {
        guard loop == nil else { return }
        if let interval { chosenInterval = interval }
        connectivity.start()
        let writes = store.writes
        let changes = connectivity.changes
        let store = store
        listeners = [
            Task { [weak self] in
                for await _ in writes { await self?.ring() }
            },
            // NB: `writes` are this process's. Another process on the device (a command beside a
            // watching one) queues changes in the same outbox: its commit says so, and a change
            // due then is sent now, not at the timer's live pace (a quarter of an hour).
            Task { [weak self] in
                for await event in await store.otherProcessEvents() where event == .committed {
                    await self?.outboxMayHaveGrown()
                }
            },
            Task { [weak self] in
                for await state in changes {
                    await self?.connectivityChanged(state)
                }
            },
        ]
        loop = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                _ = await self.syncOnce(userAsked: false)
                await self.waitForTrigger()
            }
        }
        startLive()
    }

    /// Whether `start()` holds a live channel: it is enabled, and the app has synced collections.
    /// NB: an app without synced collections has nothing to be signalled (and no collection
    /// named would subscribe it to every one).
    public nonisolated var holdsLiveChannel: Bool { configuration.live.enabled && !subscriptions.isEmpty }

    private func startLive() {
        guard holdsLiveChannel, live == nil else { return }
        // NB: each collection once: subscriptions that split one collection (recent first, then
        // the rest) name it twice, and the server refuses a channel that names one twice.
        let collections = Set(subscriptions.flatMap(\.collections)).sorted()
        let nudge = LiveNudge()
        liveNudge = nudge
        let channel = LiveLink(serverURL: link.serverURL, accessToken: link.accessToken,
                               collections: collections, settings: configuration.live, logger: logger, nudges: nudge)
        statusBroadcast.update { $0.isGoingLive = true }
        live = Task { [weak self] in
            await channel.run { [weak self] event in await self?.heard(event) }
        }
    }

    /// Stops background syncing and waits for a round in progress to end.
    public func stop() async {
        // NB: not awaited: a channel opening to a server that accepted the connection and never
        // answers cannot be interrupted, and ends with the connection.
        live?.cancel()
        live = nil
        setLive(false)
        loop?.cancel()
        listeners.forEach { $0.cancel() }
        listeners = []
        ring()
        await loop?.value
        loop = nil
        _ = await current?.value
        connectivity.stop()
    }

    /// What the live channel heard: a pull when something moved past what was pulled.
    private func heard(_ event: LiveEvent) {
        switch event {
        case .up:
            setLive(true)
            connectivity.reportAnswer()
            // NB: whatever moved while the channel was down was signalled to no one.
            ring()
        case .moved(let spaces):
            var news = false
            for (space, position) in spaces where position > (covered[space] ?? 0) {
                signalled[space] = max(signalled[space] ?? 0, position)
                news = true
            }
            if news { ring() }
        case .pull:
            ring()
        case .down:
            // NB: the timer was set for a live channel (a quarter of an hour): it is set again, or
            // nothing would sync until then. Not a round at once: after a server restart, ten
            // thousand devices would all send one in the same second.
            let wasLive = isLive
            setLive(false)
            if wasLive, doorbell != nil {
                retime = .channelDropped
                ring()
            }
        case .signedOut:
            setLive(false)
            live = nil
            // NB: the server closed the channel for a token no longer good (signed out in another
            // process, revoked): a round hears the same, and the status says to sign in again.
            ring()
        }
    }

    /// NB: one update: "going live" then "live" with nothing between (a screen would flash "not live").
    private func setLive(_ up: Bool) {
        guard isLive != up || statusBroadcast.current.isGoingLive else { return }
        isLive = up
        statusBroadcast.update { status in
            status.isLive = up
            status.isGoingLive = false
        }
    }

    /// After a sign-in: the live channel opens again with the new token.
    private func restartLiveAfterSignIn() {
        guard loop != nil, live == nil else { return }
        startLive()
    }

    private func connectivityChanged(_ state: Connectivity) {
        if state == .offline { offlineSinceLastDelivery = true }
        refreshStatus()
        if state == .online {
            if offlineSinceLastDelivery { networkReturned = true }
            ring()
        }
    }

    /// When a change waits and no round is running to take it: rings if it is due and the server
    /// answers, else sets the timer again to its time. NB: the other process may have tried it
    /// once already, and put it off by its backoff.
    private func outboxMayHaveGrown() async {
        guard current == nil, let due = try? await store.reader.read({ db in try OutboxTable.earliestDue(db) }) else { return }
        if due <= UnixMillis.now(), connectivity.current == .online {
            ring()
        } else if doorbell != nil, retime == nil {
            retime = .outboxChanged
            ring()
        }
    }

    private func ring() {
        if let doorbell {
            self.doorbell = nil
            doorbell.resume()
        } else {
            rang = true
        }
    }

    /// Sleeps until something asks for a sync, or until the next entry is due, or the interval passes.
    private func waitForTrigger() async {
        // After the live channel dropped: the first wait of the timer it falls back to, drawn
        // from [0, interval] (ten thousand devices dropped by one restart spread over it).
        var afterDrop: Duration?
        while true {
            if rang {
                rang = false
                return
            }
            await waitOnce(atMost: afterDrop)
            guard let reason = retime else {
                // What rang meanwhile is in the round about to run.
                rang = false
                return
            }
            // NB: a ring that came after the one that set the wait again (the channel back up, a
            // write) is not lost: `rang` returns at the top of the loop.
            retime = nil
            if reason == .channelDropped {
                afterDrop = .milliseconds(Int64(Double.random(in: 0...interval.fractionalMilliseconds)))
            }
        }
    }

    private func waitOnce(atMost ceiling: Duration?) async {
        let now = UnixMillis.now()
        var wait = isLive ? max(interval, configuration.live.intervalWhileLive) : interval
        if let ceiling { wait = min(wait, ceiling) }
        // NB: a signalled change that the last round failed to pull is not left to the timer
        // (an hour away while live): it is tried again as a failed entry would be.
        if signalled.contains(where: { $0.value > (covered[$0.key] ?? 0) }) {
            wait = min(wait, configuration.retry.delay(afterFailures: signalledPullFailures))
        }
        if let due = try? await store.reader.read({ db in try OutboxTable.earliestDue(db) }), connectivity.current == .online || due > now {
            wait = min(wait, .milliseconds(max(0, due - now)))
        }
        // NB: the read above let other calls in: a ring meanwhile (a write, a live signal) found no
        // doorbell and only set `rang`. Waiting now would leave it to the timer, an hour away while live.
        if rang {
            rang = false
            return
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: wait)
            if !Task.isCancelled { await self?.ring() }
        }
        await withCheckedContinuation { continuation in doorbell = continuation }
        timer.cancel()
    }

    // MARK: - Syncing

    /// Sends everything queued now (retries included) and, unless `pull` is false, pulls the
    /// server's changes: the one way to sync now. With a `budget`, it answers within it: a round
    /// still running then (a server that accepts and never answers, a slow network) goes on in the
    /// background, and the report says it is not `finished`; what the round has not sent stays
    /// queued for the next one. A screen or a command that must not wait on the network after a
    /// local write gives a budget.
    public nonisolated func syncNow(pull: Bool = true, waitingAtMost budget: Duration? = nil) async -> SyncReport {
        guard let budget else { return await syncOnce(userAsked: true, pull: pull) }
        return await withinBudget(budget) { await self.syncOnce(userAsked: true, pull: pull) } ?? .unfinished
    }

    /// After a new sign-in: lets sync run again after a 401 paused it.
    public func resumeAfterSignIn() {
        pausedForSignIn = false
        refreshStatus()
        restartLiveAfterSignIn()
        ring()
    }

    private func syncOnce(userAsked: Bool, pull: Bool = true) async -> SyncReport {
        while let running = current { _ = await running.value }
        let task = Task { await self.runRound(userAsked: userAsked, pull: pull) }
        current = task
        let report = await task.value
        current = nil
        return report
    }

    /// Runs one round (`SyncRound`) unless a 401 paused syncing, showing it in the status meanwhile.
    private func runRound(userAsked: Bool, pull: Bool) async -> SyncReport {
        guard !pausedForSignIn else {
            var report = SyncReport()
            report.failure = .unauthorized("sign in again to sync")
            return report
        }
        if let upgradeRequired, ContinuousClock.now < upgradeRequired.askAgainAt {
            var report = SyncReport()
            report.failure = .upgradeRequired(upgradeRequired.message)
            return report
        }
        statusBroadcast.update { $0.isSyncing = true }
        defer {
            statusBroadcast.update { $0.isSyncing = false }
            refreshStatus()
        }
        if leftClaimed { leftClaimed = !(await putBackClaimed()) }
        let signalledBefore = signalled
        var round = SyncRound(store: store, link: link, connectivity: connectivity, collections: collections,
                              subscriptions: subscriptions, calls: calls, configuration: configuration, logger: logger,
                              status: statusBroadcast, removeFiles: removeFiles, eventsNotBefore: eventsNotBefore)
        let report = await round.run(userAsked: userAsked, pull: pull, on: self)
        eventsNotBefore = round.eventsNotBefore
        // NB: the server answers; a live channel waiting out its backoff (two minutes after a
        // long outage) opens again now.
        if !isLive, connectivity.current == .online { liveNudge?.nudge() }
        if pull, report.pullFinished {
            // NB: what was signalled before the round began is in what it pulled.
            covered.merge(signalledBefore) { max($0, $1) }
            signalledPullFailures = 0
        } else if pull {
            signalledPullFailures += 1
        }
        announce(report)
        if report.failure == nil { upgradeRequired = nil }
        if case .deviceStorage? = report.failure { leftClaimed = !(await putBackClaimed()) }
        if report.failure == nil { await compact() }
        return report
    }

    /// Puts back what this device claimed to send and could not save the answer for, to be sent
    /// again: the server answers `duplicate` for what it has applied, so each applies once.
    /// Answers whether that was saved. NB: a round claims what it sends, and only one runs at a
    /// time here; another process's claims are put back when one opens the store (`LocalStore`).
    private func putBackClaimed() async -> Bool {
        (try? await store.writer.write { db in try OutboxTable.resetInFlight(db) }) != nil
    }

    /// Gives back to the disk what the round freed (sent changes, replaced pages), a few steps at
    /// most per round. NB: a failure is logged, never the round's: the data is whole either way.
    private func compact() async {
        do {
            let pages = try await store.compact()
            if pages > 0 { logger.debug("compacted the local database", metadata: ["pages": "\(pages)"]) }
        } catch {
            logger.notice("could not compact the local database", metadata: ["reason": "\(DeviceStorageFailure.sentence(for: error) ?? "\(type(of: error))")"])
        }
    }

    /// Leaves the round's event in the status: what it delivered, or what the server refused.
    private func announce(_ report: SyncReport) {
        let delivered = report.sent + report.calls
        if delivered > 0 {
            let afterOffline = offlineSinceLastDelivery
            offlineSinceLastDelivery = false
            statusBroadcast.update { $0.lastEvent = .delivered(count: delivered, afterOffline: afterOffline) }
        }
        // NB: a refusal matters more to the user than a delivery: it is the event left showing.
        if let (id, message) = report.rejections.last {
            statusBroadcast.update { $0.lastEvent = .rejected(entryID: id, message: message) }
        }
    }
}

// MARK: - What a round asks of the engine

extension SyncEngine: SyncRoundHost {
    func takeNetworkReturn(countingOffline: Bool) -> Bool {
        guard networkReturned || (countingOffline && offlineSinceLastDelivery) else { return false }
        networkReturned = false
        return true
    }

    func roundStopped(by failure: RemoteFailure) {
        switch failure {
        case .unreachable:
            connectivity.reportTransportFailure()
            offlineSinceLastDelivery = true
        case .unauthorized:
            connectivity.reportAnswer()
            pausedForSignIn = true
            // NB: the server refuses the channel to this token too: no reconnecting until a new sign-in.
            live?.cancel()
            live = nil
            setLive(false)
            statusBroadcast.update { $0.lastEvent = .needsSignIn }
        case .transient, .rejected:
            connectivity.reportAnswer()
        case .upgradeRequired(let message):
            connectivity.reportAnswer()
            upgradeRequired = (message, ContinuousClock.now + Self.upgradeRecheck)
        case .deviceStorage:
            // NB: the server may well have answered: connectivity is not known from this failure.
            break
        }
        logger.info("sync stopped early", metadata: ["reason": "\(failure)"])
        statusBroadcast.update { $0.lastError = failure.description }
    }
}
