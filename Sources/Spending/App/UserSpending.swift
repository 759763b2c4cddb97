import EventualAPI
import EventualKit
import Foundation

/// The signed-in person's SpendiQ on this device: everything a screen calls once signed in.
public final class UserSpending: Sendable {
    /// The store, the engine, usage events and the outbox, as every app has them.
    public let device: SignedInDevice
    /// Accounts and transactions: add, edit, delete, list, balances.
    public let ledger: Ledger
    /// The last position: kept once a minute, sent once every 5 minutes.
    public let location: LocationTracker
    let app: SpendingApp
    let cache: ReadCache

    public init(session: Session, host app: SpendingApp) throws {
        self.app = app
        device = try SignedInDevice(session: session, accounts: app.accounts,
                                    collections: [SpendingSchema.accounts.mirror, SpendingSchema.transactions.mirror, SpendingSchema.limits.mirror],
                                    subscriptions: Self.subscriptions, calls: SpendingCalls.handlers)
        ledger = Ledger(store: device.store, configuration: app.configuration, spaces: device.spaces, serverClock: device.clock)
        location = LocationTracker(store: device.store, clock: app.configuration.clock)
        cache = ReadCache(store: device.store)
    }

    /// A first sync brings the accounts, the budgets and the last 30 days of transactions first
    /// (priority 0: the dashboard is right once they are in), then the older transactions.
    static let subscriptions = SyncSubscription.recentFirst(
        SyncCollections.spendingTransactions.name, by: "occurredAt", within: .seconds(30 * 24 * 3600),
        alongside: [SyncCollections.spendingAccounts.name, SyncCollections.spendingLimits.name])

    /// Budgets checked at each write.
    public var limits: Limits { ledger.limits }
    /// Offers near the person.
    public var offers: OffersFeed { OffersFeed(cache: cache, link: app.link, ledger: ledger, configuration: app.configuration, engine: engine) }
    /// The server's findings, kept for offline use.
    public var insights: InsightsFeed { InsightsFeed(cache: cache, link: app.link, configuration: app.configuration) }
    /// CSV export and a bank's CSV import.
    public var csv: CSVExchange { CSVExchange(ledger: ledger) }
    /// Accounts shared with others, and the spaces and invitations behind them.
    public var sharing: AccountSharing {
        AccountSharing(ledger: ledger, spaces: device.spaces, username: session.username, send: { [device] in await device.sync(.localBudget, pull: false) })
    }
    /// The spaces the person is in: invitations to answer, members.
    public var spaces: Spaces { device.spaces }

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
    public func openOffers(near position: GeoPosition, radius: Int = 1000, limit: Int = OffersFeed.defaultLimit) async throws -> OffersResult {
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
    public func record(_ kind: TransactionKind, _ details: TransactionDetails, automatic: Bool = false,
                       receipt: PreparedAttachment? = nil) async throws -> Recorded {
        let recorded = try await ledger.record(kind, details, automatic: automatic, receipt: receipt)
        if let counted: AnalyticsEvent.TransactionKind = kind == .expense ? .expense : kind == .income ? .income : nil {
            await analytics.record(.transactionRecorded(counted, amountMinor: recorded.transaction.amountMinor,
                                                        currency: recorded.transaction.currency))
        }
        for warning in recorded.warnings { await analytics.record(.limitExceeded(category: warning.limit.category.isEmpty ? "all" : warning.limit.category)) }
        return recorded
    }

    // MARK: - Sync

    /// Each transaction's sync state: confirmed, waiting to be sent, or refused with the server's words.
    public func syncStates(of transactions: [SpendingTransaction]) throws -> [String: SyncState] {
        try device.syncStates(SyncCollections.spendingTransactions, ids: transactions.map(\.id))
    }

    /// The sync state of each account: a rename that waits, or one the server refused.
    public func syncStates(of accounts: [SpendingAccount]) throws -> [String: SyncState] {
        try device.syncStates(SyncCollections.spendingAccounts, ids: accounts.map(\.id))
    }

    /// The transactions matching `query` with their sync states now, then again at each committed
    /// change of them, of the accounts, or of their states (a sync from another device included).
    /// Cancel the iterating task to stop.
    public func watchTransactions(_ query: TransactionQuery = TransactionQuery()) throws
        -> AsyncThrowingStream<LiveSnapshot<SpendingTransaction>, any Error> {
        device.observe(SpendingSchema.transactions.mirror, alsoTracking: [SpendingSchema.accountsTable], id: { $0.id },
                       fetch: try ledger.transactionsFetch(query))
    }

    /// The dashboard now, then again after every committed change to the transactions or the
    /// accounts (a local write, a pulled page): `dashboard --watch`. It may repeat itself (a
    /// change that moves no total); a screen shows what differs.
    public func watchDashboard() -> AsyncThrowingStream<Dashboard, any Error> {
        // NB: each commit reads a new value, so every one is passed on; the dashboard is computed
        // from the ledger after it, as `dashboard()` does.
        let commits = store.observe(tables: [SpendingSchema.transactionsTable, SpendingSchema.accountsTable]) { _ in UUID() }
        let (dashboards, continuation) = AsyncThrowingStream.makeStream(of: Dashboard.self, throwing: (any Error).self)
        let feeding = Task {
            do {
                for try await _ in commits { continuation.yield(try dashboard()) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in feeding.cancel() }
        return dashboards
    }

    /// The changes the server refused, oldest first, with its words.
    public func failures() throws -> [FailedChange] { try device.failures() }

    /// A refused change in words: "expense EUR 9.00 on Trip", "account Home", "budget".
    public func summary(of change: FailedChange) -> String {
        // NB: a change carries only what it set, so each field is read alone (named by the record's
        // coding key): what the change set, else the row, else the server's last record. A record of
        // a space the person left is no longer on the device: its refusal kept its last fields.
        let last = change.serverRecord?.fields ?? [:]
        switch change.collection {
        case SyncCollections.spendingTransactions.name:
            typealias Field = SpendingTransaction.CodingKeys
            let current = try? ledger.transaction(change.recordID)
            let kind = change.fields[field: Field.kind]?.stringValue ?? current?.kind.rawValue ?? last[field: Field.kind]?.stringValue ?? "transaction"
            let currency = change.fields[field: Field.currency]?.stringValue ?? current?.currency ?? last[field: Field.currency]?.stringValue
            let amount = (change.fields[field: Field.amountMinor]?.int64Value ?? current?.amountMinor ?? last[field: Field.amountMinor]?.int64Value)
                .flatMap { minor in currency.map { Money(minorUnits: minor, currency: $0) } }
            let accountID = change.fields[field: Field.accountId]?.stringValue ?? current?.accountId ?? last[field: Field.accountId]?.stringValue
            let account = accountID.flatMap { try? ledger.account($0, allowArchived: true).name }
            let toID = change.fields[field: Field.toAccountId]?.stringValue ?? current?.toAccountId ?? last[field: Field.toAccountId]?.stringValue
            let target = toID.flatMap { try? ledger.account($0, allowArchived: true).name }
            let on = kind == TransactionKind.transfer.rawValue && target != nil ? "\(account ?? "another account") → \(target!)" : account.map { "on \($0)" }
            let what = [kind, amount?.description, on].compactMap { $0 }.joined(separator: " ")
            return change.deleted ? "deletion of \(kind) \(change.recordID.suffix(Ledger.shownIDLength))" : what
        case SyncCollections.spendingAccounts.name:
            let name = change.fields[field: SpendingAccount.CodingKeys.name]?.stringValue
                ?? (try? ledger.account(change.recordID, allowArchived: true).name) ?? last[field: SpendingAccount.CodingKeys.name]?.stringValue
            return "account " + (name ?? String(change.recordID.suffix(Ledger.shownIDLength)))
        case SyncCollections.spendingLimits.name: return "budget"
        default: return change.collection
        }
    }

    /// What a refused change of a shared record needs to be kept as the person's own: a
    /// transaction goes to `account`, one of theirs in its currency (an account needs nothing).
    public func ownEdits(for id: String, account reference: String?) throws -> [String: SyncValue] {
        guard let change = try failures().first(where: { $0.id == id || $0.shortID == id.suffix(OutboxEntry.shortIDLength) }),
              change.collection == SyncCollections.spendingTransactions.name else { return [:] }
        let current = try? ledger.transaction(change.recordID)
        let kind = change.fields[field: SpendingTransaction.CodingKeys.kind]?.stringValue ?? current?.kind.rawValue
        guard kind != TransactionKind.transfer.rawValue else {
            throw SpendingError.invalidField("A transfer is kept by making it again between your accounts: spendiq transfer; then discard this one")
        }
        guard let reference else { throw SpendingError.invalidField("Give --account NAME: the account of yours the transaction goes to") }
        let account = try ledger.account(reference)
        guard account.space == nil else { throw SpendingError.invalidField("\(account.name) is shared: give one of your own accounts") }
        let currency = change.fields[field: SpendingTransaction.CodingKeys.currency]?.stringValue ?? current?.currency
        if let currency, currency != account.currency {
            throw SpendingError.invalidField("The transaction is in \(currency) and \(account.name) in \(account.currency): give an account in \(currency)")
        }
        return SpendingTransaction.fields([.accountId: .string(account.id)])
    }

    /// Settles a refused change (its id, or its last 8 characters): take the server's record, keep
    /// and send the change again, or discard it.
    /// A refused side of a transfer between spaces that leaves the device (discarded, or the server
    /// had none) takes its other side with it: money never leaves one account without reaching the other.
    @discardableResult
    public func settle(_ id: String, _ choice: SettleChoice) async throws -> Settlement {
        let settlement = try await device.settle(id, choice)
        let change = settlement.change
        let linkId = SpendingTransaction.CodingKeys.linkId
        if change.collection == SyncCollections.spendingTransactions.name, settlement.removed,
           let link = change.fields[field: linkId]?.stringValue ?? change.serverRecord?.fields[field: linkId]?.stringValue,
           let other = try? ledger.transaction(link) {
            try await store.write { tx in _ = try SpendingSchema.transactions.delete(other.id, in: tx) }
        }
        return settlement
    }

    /// Online or offline, what waits in the outbox, and when the last sync was.
    public func status(probe: Bool = true) async throws -> DeviceStatus { try await device.status(probe: probe) }
}
