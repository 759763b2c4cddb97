import EventualAPI
import Foundation
import GRDB
import Logging
import OpenAPIRuntime

/// Moves the outbox to the server and the server's changes into the local store: push, then
/// pull. It runs when a local write lands, when connectivity returns, on a timer (which also
/// drives retries, never only the next write), and on demand with `syncNow()`.
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
    private var doorbell: CheckedContinuation<Void, Never>?
    private var rang = false
    private var pausedForSignIn = false
    private var offlineSinceLastDelivery = false
    /// The network came back: what waited out a backoff while it was gone goes in the next round,
    /// all together, instead of trickling out as each entry's own backoff ends.
    private var networkReturned = false
    /// Changes re-stamped in the current round after a refusal for this device's clock (once each).
    private var restampedInRound: Set<String> = []
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
        store.register(collections.compactMap { $0 as? TableMirror })
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
        statusBroadcast.update { status in
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

    /// Starts syncing in the background: on local writes, when connectivity returns, and on a timer.
    public func start() {
        guard loop == nil else { return }
        connectivity.start()
        let writes = store.writes
        let changes = connectivity.changes
        listeners = [
            Task { [weak self] in
                for await _ in writes { await self?.ring() }
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
    }

    /// Stops background syncing and waits for a round in progress to end.
    public func stop() async {
        loop?.cancel()
        listeners.forEach { $0.cancel() }
        listeners = []
        ring()
        await loop?.value
        loop = nil
        _ = await current?.value
        connectivity.stop()
    }

    private func connectivityChanged(_ state: Connectivity) {
        if state == .offline { offlineSinceLastDelivery = true }
        refreshStatus()
        if state == .online {
            if offlineSinceLastDelivery { networkReturned = true }
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
        if rang {
            rang = false
            return
        }
        let now = UnixMillis.now()
        var wait = configuration.interval
        if let due = try? await store.reader.read({ db in try OutboxTable.earliestDue(db) }), connectivity.current == .online || due > now {
            wait = min(wait, .milliseconds(max(0, due - now)))
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: wait)
            if !Task.isCancelled { await self?.ring() }
        }
        await withCheckedContinuation { continuation in doorbell = continuation }
        timer.cancel()
        rang = false
    }

    // MARK: - Syncing

    /// Sends everything queued now (retries included) and, unless `pull` is false, pulls the server's changes.
    public func syncNow(pull: Bool = true) async -> SyncReport {
        await syncOnce(userAsked: true, pull: pull)
    }

    /// Like `syncNow(pull:)`, but answers within `budget`: nil when the round is still running
    /// then (a server that accepts and never answers, a slow network). The round goes on in the
    /// background; what it has not sent stays queued for the next one. For a screen or a command
    /// that must not wait on the network after a local write.
    public nonisolated func syncNow(pull: Bool = true, waitingAtMost budget: Duration) async -> SyncReport? {
        await withinBudget(budget) { await self.syncNow(pull: pull) }
    }

    /// After a new sign-in: lets sync run again after a 401 paused it.
    public func resumeAfterSignIn() {
        pausedForSignIn = false
        refreshStatus()
        ring()
    }

    private func syncOnce(userAsked: Bool, pull: Bool = true) async -> SyncReport {
        while let running = current { _ = await running.value }
        let task = Task { await self.round(userAsked: userAsked, pull: pull) }
        current = task
        let report = await task.value
        current = nil
        return report
    }

    private func round(userAsked: Bool, pull shouldPull: Bool) async -> SyncReport {
        var report = SyncReport()
        guard !pausedForSignIn else {
            report.failure = .unauthorized("sign in again to sync")
            return report
        }
        statusBroadcast.update { $0.isSyncing = true }
        restampedInRound = []
        defer {
            statusBroadcast.update { $0.isSyncing = false }
            refreshStatus()
        }
        await learnServerTime()
        if userAsked || networkReturned {
            // NB: a person asked now, or the network is back: entries waiting out a backoff go too.
            networkReturned = false
            _ = try? await store.writer.write { db in try OutboxTable.makeAllDue(db) }
        }
        do {
            try await pushChangesAndSpaceCalls(&report)
            try await runCalls(&report)
            if shouldPull {
                // NB: an app without synced collections (its data is the server's answers to its
                // calls) has nothing to pull; the account's other apps' records are not its business.
                if collections.isEmpty {
                    let now = UnixMillis.now()
                    try await store.writer.write { db in try EngineSchema.setValue(String(now), for: .lastSyncAt, db) }
                } else {
                    try await pull(&report)
                }
            }
            if configuration.sendsAnalytics, eventsNotBefore.map({ ContinuousClock.now >= $0 }) ?? true {
                // NB: last: usage events never hold back a person's own changes.
                do {
                    let upload = try await AnalyticsUpload(store: store, link: link, limits: configuration.analyticsLimits).run()
                    report.events += upload.sent
                    report.eventDuplicates += upload.duplicates
                    report.eventsRejected += upload.rejected
                    eventsNotBefore = nil
                } catch let deferred as AnalyticsUpload.Deferred {
                    report.eventsDeferred = true
                    eventsNotBefore = ContinuousClock.now + (deferred.retryAfter ?? .seconds(60))
                    logger.info("usage events deferred", metadata: ["status": "\(deferred.status)"])
                }
            }
            statusBroadcast.update { $0.lastError = nil }
        } catch {
            let failure = RemoteFailure.from(error)
            report.failure = failure
            handle(failure)
        }
        await learnServerTime()
        if let offset = store.clock.serverOffset, abs(offset) > HybridLogicalClock.tolerance.milliseconds {
            report.clockAheadBySeconds = -offset / 1000
        }
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
        return report
    }

    private func handle(_ failure: RemoteFailure) {
        switch failure {
        case .unreachable:
            connectivity.reportTransportFailure()
            offlineSinceLastDelivery = true
        case .unauthorized:
            connectivity.reportAnswer()
            pausedForSignIn = true
            statusBroadcast.update { $0.lastEvent = .needsSignIn }
        case .transient, .rejected:
            connectivity.reportAnswer()
        }
        logger.info("sync stopped early", metadata: ["reason": "\(failure)"])
        statusBroadcast.update { $0.lastError = failure.description }
    }

    // MARK: Push

    /// Sends the changes, and the space calls among them in the outbox's order: a space created
    /// offline exists before the first item put in it arrives, and a change made before leaving a
    /// space reaches it before the person leaves. A change never overtakes a space call queued
    /// before it that waits out a backoff.
    private func pushChangesAndSpaceCalls(_ report: inout SyncReport) async throws {
        // NB: due by the round's start: a change put back during the round (held for the clock, or
        // unanswered) waits for the next round, instead of going again and again in this one when
        // the server answers more slowly than its backoff.
        let roundStart = UnixMillis.now()
        var madeDueInRound = false
        while true {
            let spaceCall = try await store.reader.read { db in try OutboxTable.firstWaitingCall(to: SpaceCall.operations, db: db) }
            try await pushChanges(before: spaceCall?.position, roundStart: roundStart, madeDueInRound: &madeDueInRound, &report)
            guard let spaceCall, spaceCall.nextAttemptAt <= UnixMillis.now() else { return }
            guard let claimed = try await store.writer.write({ db in try OutboxTable.claim(id: spaceCall.id, db: db) }) else { continue }
            try await run(claimed, &report)
        }
    }

    private func pushChanges(before position: Int64?, roundStart: Int64, madeDueInRound: inout Bool,
                             _ report: inout SyncReport) async throws {
        let configuration = self.configuration
        while true {
            let batch = try await store.writer.write { db in
                try OutboxTable.claim(kind: .change, limit: configuration.batchSize, maxBytes: configuration.maxBatchBytes,
                                      now: roundStart, before: position, db: db)
            }
            guard !batch.isEmpty else { return }
            let results: [SyncWire.PushResult]
            do {
                results = try await send(batch)
            } catch {
                try await reschedule(batch, after: RemoteFailure.from(error))
                throw error
            }
            connectivity.reportAnswer()
            if networkReturned || (offlineSinceLastDelivery && !madeDueInRound) {
                // NB: this answer is how the round learned the network is back (a timer round can
                // beat the connectivity probe): what waited out a backoff goes now, with the rest.
                networkReturned = false
                madeDueInRound = true
                try await store.writer.write { db in try OutboxTable.makeAllDue(db) }
            }
            await learnServerTime()
            try await record(results, for: batch, into: &report)
        }
    }

    /// Takes in the server's time from the latest answer, so that stamps follow it when this
    /// device's clock is wrong.
    private func learnServerTime() async {
        guard let serverNow = link.serverTime.now() else { return }
        try? await store.learnServerTime(serverNow)
    }

    private func send(_ batch: [OutboxEntry]) async throws -> [SyncWire.PushResult] {
        let (response, body) = try await link.send(.post, "/v1/sync/push", json: SyncWire.pushBody(batch), operationID: "syncPush")
        guard response.status == .ok else { throw RemoteFailure.answer(response.status.code, body) }
        return try JSONDecoder().decode(SyncWire.PushAnswer.self, from: body).results
    }

    private func record(_ results: [SyncWire.PushResult], for batch: [OutboxEntry], into report: inout SyncReport) async throws {
        let byID = Dictionary(results.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var done: [String] = [], unanswered: [String] = []
        var rejected: [(id: String, message: String)] = [], refusals: [String: SyncWire.PushResult] = [:]
        var restamp: [(entry: OutboxEntry, message: String)] = [], held: [(id: String, message: String)] = []
        for entry in batch {
            guard let result = byID[entry.id] else { unanswered.append(entry.id); continue }
            switch result.status {
            case .applied: done.append(entry.id)
            case .duplicate:
                done.append(entry.id)
                report.duplicates += 1
            case .rejected:
                let message = result.message ?? "rejected by the server"
                guard isClockRefusal(entry, message: message) else {
                    rejected.append((entry.id, message))
                    refusals[entry.id] = result
                    continue
                }
                // NB: refused only because this device's clock ran ahead: never failed, never lost.
                if restampedInRound.contains(entry.id) { held.append((entry.id, message)) } else { restamp.append((entry, message)) }
            }
        }
        let retryAt = UnixMillis.now() + configuration.retry.delay(afterFailures: 0).milliseconds
        let heldRetryAt = UnixMillis.now() + configuration.retry.delay(afterFailures: batch.map(\.attempts).max() ?? 0).milliseconds
        let clock = store.clock
        let serverRecords = try refusals.compactMapValues { try $0.current.map { try JSONEncoder.sorted.encode($0) } }
        try await store.writer.write { [done, rejected, refusals, unanswered, restamp, held] db in
            try OutboxTable.remove(ids: done, db: db)
            for (id, message) in rejected {
                try OutboxTable.markFailed(id: id, message: message, code: refusals[id]?.code, field: refusals[id]?.field,
                                           serverRecord: serverRecords[id], db: db)
            }
            if !unanswered.isEmpty {
                try OutboxTable.reschedule(ids: unanswered, retryAt: retryAt, error: "the server did not answer for this change",
                                           countsAsAttempt: true, db: db)
            }
            for (entry, message) in restamp {
                let change = try JSONDecoder().decode(ChangePayload.self, from: entry.payload)
                let restamped = ChangePayload(hlc: clock.tick().description, fields: change.fields, deltas: change.deltas, deleted: change.deleted)
                try OutboxTable.replacePayload(id: entry.id, payload: try JSONEncoder.sorted.encode(restamped), error: message, db: db)
            }
            if !restamp.isEmpty { try EngineSchema.saveLastStamp(clock.latest, db) }
            for (id, message) in held {
                try OutboxTable.reschedule(ids: [id], retryAt: heldRetryAt, error: message, countsAsAttempt: true, db: db)
            }
        }
        restampedInRound.formUnion(restamp.map(\.entry.id))
        report.sent += done.count
        report.rejected += rejected.count
        report.restamped += restamp.count
        report.clockRefused += held.count
        report.clockRefusals += held.map { (entryID: $0.id, message: $0.message) }
        for (id, message) in rejected {
            logger.warning("change rejected", metadata: ["id": "\(id)", "message": "\(message)"])
            report.rejections.append((id, message))
        }
    }

    /// Whether the server refused a change only because its stamp is ahead of the server's clock:
    /// it says so, or the stamp lies beyond what this engine allows past the server's time.
    private func isClockRefusal(_ entry: OutboxEntry, message: String) -> Bool {
        if message.contains("ahead of the server's clock") { return true }
        guard let serverNow = link.serverTime.now(),
              let change = try? JSONDecoder().decode(ChangePayload.self, from: entry.payload),
              let stamp = HLCStamp(parsing: change.hlc) else { return false }
        return stamp.millis > serverNow + store.clock.maxDrift.milliseconds
    }

    /// Puts entries back after a failed request: with backoff, or without counting an attempt
    /// when only a sign-in is missing.
    private func reschedule(_ entries: [OutboxEntry], after failure: RemoteFailure) async throws {
        let attempts = entries.map(\.attempts).max() ?? 0
        let isSignIn: Bool = if case .unauthorized = failure { true } else { false }
        let retryAt = isSignIn ? 0 : UnixMillis.now() + configuration.retry.delay(afterFailures: attempts).milliseconds
        if case .rejected(_, let message) = failure, entries.count == 1 {
            try await store.writer.write { db in try OutboxTable.markFailed(id: entries[0].id, message: message, db: db) }
            return
        }
        try await store.writer.write { db in
            try OutboxTable.reschedule(ids: entries.map(\.id), retryAt: retryAt, error: failure.description,
                                       countsAsAttempt: !isSignIn, db: db)
        }
    }

    // MARK: Calls

    /// The calls other than space calls, which went with the changes.
    private func runCalls(_ report: inout SyncReport) async throws {
        // NB: due as of the phase's start: a call deferred meanwhile is due again after a backoff
        // that a busy machine may outlast within the phase, and must not run twice in one round.
        let startedAt = UnixMillis.now()
        while true {
            let claimed = try await store.writer.write { db in
                try OutboxTable.claim(kind: .call, limit: 1, maxBytes: .max, now: startedAt, excluding: SpaceCall.operations, db: db)
            }
            guard let entry = claimed.first else { return }
            try await run(entry, &report)
        }
    }

    /// Runs one claimed call: done, failed with the server's words (the round goes on), or put
    /// back for later (the round stops).
    private func run(_ entry: OutboxEntry, _ report: inout SyncReport) async throws {
        guard let handler = calls[entry.operation] else {
            let message = "This app version cannot send '\(entry.operation)'"
            try await store.writer.write { db in try OutboxTable.markFailed(id: entry.id, message: message, db: db) }
            report.rejected += 1
            report.rejectedCalls += 1
            report.rejections.append((entry.id, message))
            return
        }
        do {
            try await handler(CallContext(client: link.client, idempotencyKey: entry.id, payload: entry.payload, store: store))
        } catch let deferred as CallDeferred {
            connectivity.reportAnswer()
            if UnixMillis.now() - entry.createdAt > configuration.longestDeferral.milliseconds {
                let message = deferred.reason + " (it has waited \(configuration.longestDeferral.milliseconds / 86_400_000) days: retry or discard it)"
                try await store.writer.write { db in try OutboxTable.markFailed(id: entry.id, message: message, db: db) }
                report.rejected += 1
                report.rejectedCalls += 1
                report.rejections.append((entry.id, message))
                return
            }
            // NB: its next try is after a backoff; this round does not claim it again (runCalls).
            try await reschedule([entry], after: .transient(status: 409, message: deferred.reason))
            report.deferredCalls += 1
            return
        } catch {
            let failure = RemoteFailure.from(error)
            try await reschedule([entry], after: failure)
            if case .rejected(_, let message) = failure {
                report.rejected += 1
                report.rejectedCalls += 1
                report.rejections.append((entry.id, message))
                connectivity.reportAnswer()
                return
            }
            throw failure
        }
        connectivity.reportAnswer()
        try await store.writer.write { db in try OutboxTable.remove(ids: [entry.id], db: db) }
        report.calls += 1
    }

    // MARK: Pull

    /// Pulls each subscription in priority order. A server that no longer keeps what a cursor
    /// missed (410) makes the device start over once, in the same round.
    private func pull(_ report: inout SyncReport) async throws {
        var startedOver = false
        while true {
            do {
                let now = UnixMillis.now()
                let collections = self.collections, subscriptions = self.subscriptions
                // NB: a write transaction only when a subscription has no row yet (or one was dropped).
                var rows = try await store.reader.read { db in
                    try SubscriptionTable.needsPreparing(subscriptions, db: db) ? nil : try SubscriptionTable.rows(of: subscriptions, db: db)
                }
                if rows == nil {
                    rows = try await store.writer.write { db in try SubscriptionTable.prepare(subscriptions, mirrors: collections, now: now, db: db) }
                }
                let unchecked = rows ?? []
                let prepared = unchecked.contains(where: { $0.cursor == nil && $0.fresh })
                    ? try await store.reader.read { db in
                        try SubscriptionTable.checkingFreshness(unchecked, of: subscriptions, mirrors: collections, db: db)
                    }
                    : unchecked
                for (index, row) in prepared.enumerated() {
                    try await pull(row, isLastSubscription: index == prepared.count - 1, &report)
                }
                return
            } catch is CursorExpired where !startedOver {
                startedOver = true
                report.startedOver = true
                logger.notice("the server no longer keeps what this device missed: starting over from a first sync")
                try await startOver()
            }
        }
    }

    /// The server answered 410 to a pull: the cursor is older than the deletions it keeps.
    private struct CursorExpired: Error {}

    /// Deletes every mirrored record no waiting change is about and sends every subscription back
    /// to a first pull, in one transaction: what the device has still to send stays and goes.
    private func startOver() async throws {
        let mirrors = Array(collections.values)
        try await store.writer.write { db in
            for mirror in mirrors { try mirror.deleteRecordsWithoutWaitingChanges(in: db) }
            let holdsNothing = try mirrors.allSatisfy { try !$0.hasRecords(in: db) }
            try SubscriptionTable.startOver(fresh: holdsNothing, db: db)
        }
        refreshStatus()
    }

    /// Pulls one subscription to its end, a page per transaction. While its first sync runs it
    /// asks the server how many records remain (on its first page in a round, and again when the
    /// count it had is used up), so that its progress has a total.
    ///
    /// The next page is asked for while this one is written, from this page's cursor: the server
    /// reads and the device writes at the same time (a first sync of 45,000 records took 5.0 s
    /// one after the other). A page is still written only after the one before it committed, and
    /// one fetched ahead is dropped unread when writing fails, so nothing is applied twice or out
    /// of order, and a stop goes on from the last page written.
    private func pull(_ subscription: SubscriptionRow, isLastSubscription: Bool, _ report: inout SyncReport) async throws {
        var row = subscription
        var remaining: Int?
        var ahead: Task<SyncWire.PulledPage, any Error>?
        defer { ahead?.cancel() }
        while true {
            let counting = !row.complete && (remaining ?? 0) <= 0
            let page: SyncWire.PulledPage
            if let fetched = ahead {
                ahead = nil
                page = try await fetched.value
            } else {
                page = try await fetchPage(row, since: row.since, counting: counting)
            }
            connectivity.reportAnswer()
            let personalSpace = page.personalSpace
            let records = page.changes.map { $0.remote(personalSpace: personalSpace) }
            let isLast = !page.hasMore || records.isEmpty
            remaining = isLast ? 0 : page.remaining ?? max(0, (remaining ?? 0) - records.count)
            if !isLast {
                let next = row, counted = !row.complete && (remaining ?? 0) <= 0
                ahead = Task { try await self.fetchPage(next, since: page.cursor, counting: counted) }
            }
            row.cursor = page.cursor
            if !row.complete {
                row.received += records.count
                row.total = max(row.total, row.received + (remaining ?? 0))
                row.complete = isLast
                row.updatedAt = UnixMillis.now()
            }
            let (clockProblems, echoes, failed, forgotten) = try await apply(records, of: page, subscription: row,
                                                                             isLast: isLast && isLastSubscription)
            removeFiles(forgotten)
            report.pulled += records.count - echoes
            report.echoes += echoes
            report.rejected += failed.count
            report.rejections += failed.map { (entryID: $0.id, message: $0.message) }
            for (id, message) in failed { logger.warning("change failed", metadata: ["id": "\(id)", "message": "\(message)"]) }
            if let problem = clockProblems.first {
                statusBroadcast.update { $0.lastError = problem }
            }
            if !subscription.complete { publishProgress() }
            if isLast { return }
        }
    }

    /// One page of a subscription's pull from `since`.
    private nonisolated func fetchPage(_ row: SubscriptionRow, since: String?, counting: Bool) async throws -> SyncWire.PulledPage {
        var query = URLComponents()
        query.queryItems = [URLQueryItem(name: "limit", value: String(configuration.pullLimit))]
            + (since.map { [URLQueryItem(name: "since", value: $0)] } ?? [])
            + row.query.map { URLQueryItem(name: "collection", value: $0) }
            + (counting ? [URLQueryItem(name: "count", value: "true")] : [])
        // NB: `+` in a bound is a plus, not a space, to the server.
        let encoded = (query.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        let (response, body) = try await link.send(.get, "/v1/sync/pull?" + encoded, json: nil, operationID: "syncPull")
        if response.status.code == 410 { throw CursorExpired() }
        guard response.status == .ok else { throw RemoteFailure.answer(response.status.code, body) }
        return try JSONDecoder().decode(SyncWire.PulledPage.self, from: body)
    }

    /// Puts a subscription's progress in the status, folded into its priority's.
    private func publishProgress() {
        let subscriptions = self.subscriptions
        guard let firstSync = try? store.reader.read({ db in try SubscriptionTable.progress(of: subscriptions, db: db) }) else { return }
        statusBroadcast.update { $0.firstSync = firstSync }
    }

    /// The rows of `space` that changes waiting to be sent (or refused already) are about, as deleted records holding
    /// their last fields: to the person, gone from a space they are no longer in.
    private static func rowsWithWaitingChanges(in space: String, _ collections: [String: any SyncedCollectionStore],
                                               _ db: Database) throws -> [RemoteRecord] {
        let waiting = try Row.fetchAll(db, sql: """
            SELECT DISTINCT operation, record_id FROM eventual_outbox WHERE kind = 'change' AND space = ? AND state IN ('pending', 'failed')
            """, arguments: [space])
        return try waiting.compactMap { row in
            guard let mirror = collections[row["operation"]] as? TableMirror, let id = row["record_id"] as String?,
                  let fields = try mirror.fieldsOfRow(id, db) else { return nil }
            return RemoteRecord(collection: mirror.collection.name, recordID: id, fields: fields, deleted: true, hlc: "", space: space)
        }
    }

    /// Writes a page in one transaction, so a crash never skips nor half-applies one: the spaces
    /// the person is in; the rows of those they left or were removed from, deleted, and their
    /// changes to them still waiting, failed; the pulled records; the subscription's cursor that
    /// follows them and its progress;
    /// after the last page, the time of this sync (a live query's snapshot of the page has it).
    /// Returns clock warnings, how many records were this device's own changes coming back, the
    /// changes failed, and the attachments downloaded from the spaces left (their files go after the commit).
    private func apply(_ records: [RemoteRecord], of page: SyncWire.PulledPage, subscription: SubscriptionRow, isLast: Bool) async throws
        -> (problems: [String], echoes: Int, failed: [(id: String, message: String)], forgotten: [String]) {
        let collections = self.collections
        let clock = store.clock
        let logger = self.logger
        return try await store.writer.write { db in
            var problems: [String] = []
            var echoes = 0
            var failed: [(id: String, message: String)] = []
            var forgotten: [String] = []
            if let spaces = page.spaces { try SpaceTable.replace(with: spaces, db: db) }
            for space in page.removed ?? [] {
                // NB: the rows with changes waiting, as last seen: their refusals name them, and one kept as the person's own has them whole.
                let lastSeen = try Self.rowsWithWaitingChanges(in: space.id, collections, db)
                for mirror in collections.values { try mirror.deleteRecords(inSpace: space.id, in: db) }
                forgotten += try AttachmentTable.forgetDownloads(from: space.id, db)
                let message = "You are no longer a member of \(space.name)"
                failed += try OutboxTable.failChanges(in: space.id, message: message, db: db).map { ($0, message) }
                for record in lastSeen { try FailedChange.keep(record, db) }
            }
            var pendingByCollection: [String: [String: PendingEdits]] = [:]
            for (collection, records) in Dictionary(grouping: records, by: \.collection) where collections[collection] != nil {
                pendingByCollection[collection] = try OutboxTable.unacknowledgedEdits(
                    collection: collection, recordIDs: records.map(\.recordID), db: db)
            }
            for record in records {
                if let stamp = HLCStamp(parsing: record.hlc) {
                    do { try clock.receive(stamp) } catch { problems.append("\(error)") }
                    if stamp.node == clock.node { echoes += 1 }
                }
                guard let mirror = collections[record.collection] else {
                    logger.debug("pulled a record of an unknown collection", metadata: ["collection": "\(record.collection)"])
                    continue
                }
                let pending = pendingByCollection[record.collection]?[record.recordID] ?? PendingEdits()
                if pending != PendingEdits() { try FailedChange.keep(record, db) }
                // NB: a delete waiting to be sent is the truth until the server hears it.
                guard !pending.deletes else { continue }
                try mirror.apply(record, pending: pending, in: db)
            }
            try SubscriptionTable.save(subscription, db: db)
            if isLast { try EngineSchema.setValue(String(UnixMillis.now()), for: .lastSyncAt, db) }
            return (problems, echoes, failed, forgotten)
        }
    }
}
