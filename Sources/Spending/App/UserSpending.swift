import EventualAPI
import EventualKit
import Foundation
import GRDB
import Logging

/// The signed-in person's SpendiQ on this device: everything a screen calls once signed in.
public final class UserSpending: Sendable {
    public let session: Session
    public let store: LocalStore
    /// Accounts and transactions: add, edit, delete, list, balances.
    public let ledger: Ledger
    public let engine: SyncEngine
    /// The last position: kept once a minute, sent once every 5 minutes.
    public let location: LocationTracker
    /// Usage events for the product team's questions (off with `SpendingConfiguration.analyticsEnabled`).
    public let analytics: Analytics
    let app: SpendingApp
    let cache: ReadCache

    init(session: Session, app: SpendingApp) throws {
        self.session = session
        self.app = app
        store = try LocalStore(path: app.configuration.databasePath(session.userID), migrations: SpendingSchema.migrations)
        ledger = Ledger(store: store, configuration: app.configuration)
        location = LocationTracker(store: store, clock: app.configuration.clock)
        cache = ReadCache(store: store)
        var logger = Logger(label: "spendiq.sync")
        logger.logLevel = app.configuration.engineLogLevel
        analytics = Analytics(store: store, app: AnalyticsApp.spendiQ.rawValue, appVersion: SpendingApp.version,
                              isEnabled: app.configuration.analyticsEnabled, logger: logger)
        var sync = app.configuration.sync
        sync.sendsAnalytics = sync.sendsAnalytics && app.configuration.analyticsEnabled
        engine = SyncEngine(store: store, link: app.link,
                            collections: [TableMirror(SyncCollections.spendingAccounts, table: SpendingSchema.accountsTable),
                                          TableMirror(SyncCollections.spendingTransactions, table: SpendingSchema.transactionsTable),
                                          TableMirror(SyncCollections.spendingLimits, table: SpendingSchema.limitsTable)],
                            calls: SpendingCalls.handlers, configuration: sync, logger: logger)
    }

    public var outbox: Outbox { Outbox(store: store) }
    /// Budgets checked at each write.
    public var limits: Limits { ledger.limits }
    /// Offers near the person.
    public var offers: OffersFeed { OffersFeed(cache: cache, link: app.link, ledger: ledger, configuration: app.configuration, engine: engine) }
    /// The server's findings, kept for offline use.
    public var insights: InsightsFeed { InsightsFeed(cache: cache, link: app.link, configuration: app.configuration) }
    /// CSV export and a bank's CSV import.
    public var csv: CSVExchange { CSVExchange(ledger: ledger) }

    /// The home screen, computed from this device's data.
    public func dashboard() throws -> Dashboard { try Dashboard.compute(ledger: ledger) }

    /// Records that the person opened the app ("last seen", seed F5): one coalesced call, sent
    /// when the server can be reached; and queues the last position if it is due.
    func recordStart() async throws {
        await analytics.record(.appOpened)
        let now = app.configuration.clock()
        try await store.write { tx in
            try tx.enqueueCall(SpendingCalls.lastSeen, payload: LastSeenCall(at: now), coalescingKey: SpendingCalls.lastSeen)
        }
        try await location.catchUp()
        try await limits.adoptDeviceLimits()
    }

    /// Counts a view of an offer of `shop` (queued offline).
    public func viewOffer(_ id: String, shop: String) async throws {
        _ = try Ledger.text(id, field: "note", collection: SyncCollections.spendingTransactions, required: true)
        try await store.write { tx in try tx.enqueueCall(SpendingCalls.offerView, payload: OfferViewCall(offerId: id)) }
        await analytics.record(.offerViewed(id, shop: shop))
    }

    // MARK: - Screens that the product team's questions count

    /// The dashboard, as its screen opens.
    public func openDashboard() async throws -> Dashboard {
        await analytics.record(.dashboardOpened)
        return try dashboard()
    }

    /// The offers near `position`, as their screen opens (online, or from the saved list).
    public func openOffers(near position: Coordinates, radius: Int = 1000, limit: Int = OffersFeed.defaultLimit) async throws -> OffersResult {
        let result = try await offers.offers(near: position, radius: radius, limit: limit)
        await analytics.record(.offersOpened(online: !result.stale && result.note == nil))
        return result
    }

    /// The server's findings, as their screen shows them.
    public func openInsights() async throws -> InsightsResult {
        let result = try await insights.insights()
        for insight in result.insights { await analytics.record(.insightShown(insight.kind)) }
        return result
    }

    /// Records a transaction (see `Ledger.record`), counting it and any limit it exceeds.
    public func record(_ kind: TransactionKind, _ details: TransactionDetails, automatic: Bool = false) async throws -> Recorded {
        let recorded = try await ledger.record(kind, details, automatic: automatic)
        if let counted: AnalyticsEvent.TransactionKind = kind == .expense ? .expense : kind == .income ? .income : nil {
            await analytics.record(.transactionRecorded(counted, amountMinor: recorded.transaction.amountMinor,
                                                        currency: recorded.transaction.currency))
        }
        for warning in recorded.warnings { await analytics.record(.limitExceeded(category: warning.limit.category.isEmpty ? "all" : warning.limit.category)) }
        return recorded
    }

    // MARK: - Sync

    /// Online or offline, what waits in the outbox, and when the last sync was.
    public func status(probe: Bool = true) async throws -> SpendingStatus {
        let monitor = await engine.connectivity
        let connectivity = probe ? await monitor.check(within: app.configuration.localCommandSyncBudget) : monitor.current
        let entries = try outbox.entries()
        await engine.refreshStatus()
        let lines = try entries.map { try OutboxLine(entry: $0, store: store) }
        return SpendingStatus(connectivity: connectivity, pending: lines.filter { $0.state != "failed" }.count,
                              failed: lines.filter { $0.state == "failed" }.count, entries: lines,
                              lastSyncAt: engine.currentStatus.lastSyncAt)
    }

    /// Sends what waits and fetches what other devices sent, now.
    public func sync(progress: (@Sendable (_ remaining: Int, _ total: Int) -> Void)? = nil) async throws -> SyncReport {
        let total = try outbox.counts().pending
        let watcher: Task<Void, Never>? = progress.map { progress in
            let outbox = self.outbox
            return Task {
                while !Task.isCancelled {
                    progress((try? outbox.counts().pending) ?? 0, total)
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
        }
        let report = await engine.syncNow()
        watcher?.cancel()
        await watcher?.value
        progress?((try? outbox.counts().pending) ?? 0, total)
        if report.failure == nil { await app.flushRevocations() }
        if case .unauthorized = report.failure { try? app.vault.tokenRejected() }
        return report
    }

    /// Sends a change the server refused again (`id`: its whole id or the 8 characters status shows).
    @discardableResult
    public func retry(_ id: String) async throws -> OutboxLine {
        let entry = try await outbox.retry(id)
        await trySend()
        return try OutboxLine(entry: entry, store: store)
    }

    /// Drops a change the server refused, for good (`id` as for `retry`).
    @discardableResult
    public func discard(_ id: String) async throws -> OutboxLine {
        let entry = try await outbox.discard(id)
        return try OutboxLine(entry: entry, store: store)
    }

    /// Tries to send what a command just queued, waiting at most the local budget; the rest stays queued.
    @discardableResult
    public func trySend() async -> SyncReport? {
        await engine.syncNow(pull: false, waitingAtMost: app.configuration.localCommandSyncBudget)
    }
}

/// What `spendiq status` shows.
public struct SpendingStatus: Sendable, Equatable {
    public let connectivity: Connectivity
    public let pending: Int
    public let failed: Int
    public let entries: [OutboxLine]
    public let lastSyncAt: Int64?
}

/// One outbox entry, said for people.
public struct OutboxLine: Sendable, Equatable, Codable {
    public let id: String
    /// The last 8 characters of the id, as `status` shows them (for retry and discard).
    public var shortID: String { String(id.suffix(OutboxEntry.shortIDLength)) }
    public let state: String
    /// "transaction 1d2e3f4a", "account Cash", "last visit", "position", "view of an offer".
    public let summary: String
    public let attempts: Int
    public let lastError: String?

    init(entry: OutboxEntry, store: LocalStore) throws {
        id = entry.id
        state = entry.state == .failed ? "failed" : "pending"
        attempts = entry.attempts
        lastError = entry.lastError
        switch (entry.kind, entry.operation) {
        case (.change, SyncCollections.spendingAccounts.name):
            let name = try store.reader.read { db in
                try String.fetchOne(db, sql: "SELECT name FROM spending_accounts WHERE id = ?", arguments: [entry.recordID ?? ""])
            }
            summary = "account \(name ?? String((entry.recordID ?? "?").suffix(8)))"
        case (.change, SyncCollections.spendingLimits.name): summary = "budget"
        case (.change, _): summary = "transaction \(String((entry.recordID ?? "?").suffix(8)))"
        case (.call, SpendingCalls.lastSeen): summary = "last visit"
        case (.call, SpendingCalls.location): summary = "position"
        case (.call, SpendingCalls.offerView): summary = "view of an offer"
        case (.call, let operation): summary = operation
        }
    }
}
