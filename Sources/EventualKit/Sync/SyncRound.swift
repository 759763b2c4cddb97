import EventualAPI
import Foundation
import GRDB
import Logging

/// The engine's state that outlives a round, as a round reads and changes it.
protocol SyncRoundHost: Actor {
    /// Whether what waits out a backoff should go now because the network came back (or, with
    /// `countingOffline`, because the device was offline since its last delivery), forgetting
    /// that the network came back: it is acted on once.
    func takeNetworkReturn(countingOffline: Bool) -> Bool
    /// Recounts the outbox and publishes the status.
    func refreshStatus()
    /// The round stopped early: tells the connectivity and the status, and pauses after a 401.
    func roundStopped(by failure: RemoteFailure)
}

/// One sync round: takes in the server's time, makes the waiting entries due when a person asked
/// or the network came back, pushes the changes and space calls (`SyncPusher`), runs the other
/// calls (`CallRunner`), pulls (`SyncPuller`) and sends usage events; a failure stops it and goes
/// into its report. A failure to deliver that the server answered (a push it failed or refused
/// whole) stops only the delivering: the pull still runs (`pullsAfter`). Made per round from the
/// engine's dependencies.
///
/// NB: it runs on the engine's actor (`on engine: isolated`, and `nonisolated(nonsending)` in the
/// phases), as it did when it was the engine's own methods: the engine's state and status change
/// only at the round's awaits, so an answer and the check that the network came back are never
/// split by a connectivity change, and `refreshStatus()` never overwrites a newer progress.
struct SyncRound {
    private let store: LocalStore
    private let link: ServerLink
    private let collections: [String: any SyncedCollectionStore]
    private let configuration: SyncConfiguration
    private let logger: Logger
    private let status: Broadcast<SyncStatus>
    private var pusher: SyncPusher
    private let callRunner: CallRunner
    private let puller: SyncPuller
    /// When the server said it cannot file usage events before (its Retry-After, or a minute): the
    /// engine's, handed in and read back after the round.
    private(set) var eventsNotBefore: ContinuousClock.Instant?

    init(store: LocalStore, link: ServerLink, connectivity: ConnectivityMonitor,
         collections: [String: any SyncedCollectionStore], subscriptions: [SyncSubscription],
         calls: [String: CallHandler], configuration: SyncConfiguration, logger: Logger,
         status: Broadcast<SyncStatus>, removeFiles: @escaping @Sendable ([String]) -> Void,
         eventsNotBefore: ContinuousClock.Instant?) {
        self.store = store
        self.link = link
        self.collections = collections
        self.configuration = configuration
        self.logger = logger
        self.status = status
        self.eventsNotBefore = eventsNotBefore
        let callRunner = CallRunner(store: store, link: link, connectivity: connectivity, configuration: configuration, calls: calls)
        self.callRunner = callRunner
        pusher = SyncPusher(store: store, link: link, connectivity: connectivity, configuration: configuration,
                            logger: logger, callRunner: callRunner)
        puller = SyncPuller(store: store, link: link, connectivity: connectivity, collections: collections,
                            subscriptions: subscriptions, configuration: configuration, logger: logger,
                            status: status, removeFiles: removeFiles)
    }

    /// Runs the round for `engine` and returns what it did; `shouldPull` false only pushes and runs calls.
    mutating func run(userAsked: Bool, pull shouldPull: Bool, on engine: isolated any SyncRoundHost) async -> SyncReport {
        var report = SyncReport()
        await store.learnServerTime(from: link)
        let networkReturned = engine.takeNetworkReturn(countingOffline: false)
        if userAsked || networkReturned {
            // NB: a person asked now, or the network is back: entries waiting out a backoff go too.
            _ = try? await store.writer.write { db in try OutboxTable.makeAllDue(db) }
        }
        if let app = configuration.app {
            // NB: changes that wait for the server to serve this device's version go with this round once it does.
            _ = await NewerAppWait.releaseIfServed(app, store: store, link: link)
        }
        do {
            let undelivered = try await deliver(&report, on: engine)
            if collections.isEmpty {
                // NB: an app without synced collections (its data is the server's answers to its
                // calls) has nothing to pull; the account's other apps' records are not its business.
                // Its last sync is a whole round, or one that delivered what waited (a scan sent
                // by the command that made it is a sync to the person, not "never").
                if undelivered == nil, shouldPull || report.sent + report.calls > 0 {
                    // NB: by the server's time when this device's clock is off (see `SignedInDevice.status`).
                    let now = store.clock.now()
                    try await store.writer.write { db in try EngineSchema.setValue(String(now), for: .lastSyncAt, db) }
                }
            } else if shouldPull {
                try await puller.pull(&report, on: engine)
                if report.sentBackAfterRestore > 0 {
                    // NB: what the restored server lost goes now, and what it then holds comes back, in this round.
                    if try await deliver(&report, on: engine) == nil { try await puller.pull(&report, on: engine) }
                }
            }
            report.pullFinished = shouldPull
            if undelivered == nil, configuration.sendsAnalytics, eventsNotBefore.map({ ContinuousClock.now >= $0 }) ?? true {
                // NB: last: usage events never hold back a person's own changes.
                try await sendUsageEvents(&report)
            }
            if undelivered == nil { status.update { $0.lastError = nil } }
        } catch {
            let failure = RemoteFailure.from(error)
            // NB: a pull that fails after a failed push leaves the push's failure in the report: it came first.
            report.failure = report.failure ?? failure
            engine.roundStopped(by: failure)
        }
        await store.learnServerTime(from: link)
        if configuration.app != nil { report.waitingForNewerApp = (try? await store.reader.read { db in try NewerAppWait.count(db) }) ?? 0 }
        if let offset = store.clock.serverOffset, abs(offset) > HybridLogicalClock.tolerance.milliseconds {
            report.clockAheadBySeconds = -offset / 1000
        }
        return report
    }

    /// Pushes the changes and space calls, then runs the other calls. A failure the server answered
    /// (`pullsAfter`) goes into the report and is returned, the rest of the delivering left for the
    /// next round; any other is thrown and stops the round.
    private mutating func deliver(_ report: inout SyncReport, on engine: isolated any SyncRoundHost) async throws -> RemoteFailure? {
        do {
            try await pusher.pushChangesAndSpaceCalls(&report, on: engine)
            try await callRunner.runCalls(&report)
            return nil
        } catch {
            let failure = RemoteFailure.from(error)
            guard Self.pullsAfter(failure) else { throw failure }
            report.failure = failure
            engine.roundStopped(by: failure)
            return failure
        }
    }

    /// Whether a round whose delivering failed so still pulls: when the server answered (it failed,
    /// or refused the push whole, as an older server does past a quota), what others changed may
    /// still come, and a device must never stop hearing of it for what it cannot send. Not when no
    /// answer came (offline: the pull would wait out its deadlines for nothing), nor after a 401
    /// (the pull is refused too, and sync waits for a new sign-in).
    static func pullsAfter(_ failure: RemoteFailure) -> Bool {
        switch failure {
        case .transient, .rejected: return true
        // NB: nor when this device cannot save: the pull's pages would fail to save too.
        // NB: nor when the app must be updated: the pull is refused too.
        case .unreachable, .unauthorized, .deviceStorage, .upgradeRequired: return false
        }
    }

    /// Sends the waiting usage events; a server that cannot file them now says when to try again.
    private nonisolated(nonsending) mutating func sendUsageEvents(_ report: inout SyncReport) async throws {
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
}
