import EventualAPI
import Foundation
import GRDB
import Logging

/// The pull phase of a round: prepares the subscriptions, pulls each one to its end, a page per
/// transaction (`PageApply`) with the next page fetched meanwhile, publishes a first sync's
/// progress, and starts over once when the server no longer keeps what a cursor missed.
struct SyncPuller: Sendable {
    private let store: LocalStore
    private let link: ServerLink
    private let connectivity: ConnectivityMonitor
    private let collections: [String: any SyncedCollectionStore]
    private let subscriptions: [SyncSubscription]
    private let configuration: SyncConfiguration
    private let logger: Logger
    private let status: Broadcast<SyncStatus>
    /// Removes the files of attachments forgotten with a space the person left (`Attachments.removeFiles`).
    private let removeFiles: @Sendable ([String]) -> Void

    init(store: LocalStore, link: ServerLink, connectivity: ConnectivityMonitor,
         collections: [String: any SyncedCollectionStore], subscriptions: [SyncSubscription],
         configuration: SyncConfiguration, logger: Logger, status: Broadcast<SyncStatus>,
         removeFiles: @escaping @Sendable ([String]) -> Void) {
        self.store = store
        self.link = link
        self.connectivity = connectivity
        self.collections = collections
        self.subscriptions = subscriptions
        self.configuration = configuration
        self.logger = logger
        self.status = status
        self.removeFiles = removeFiles
    }

    /// Pulls each subscription in priority order. A server that no longer keeps what a cursor
    /// missed (410) makes the device start over once, in the same round; so does one that went
    /// back in time (a backup restored: `ServerHistory`), after the device queued what it holds
    /// of the spaces concerned to be sent back.
    func pull(_ report: inout SyncReport, on engine: isolated any SyncRoundHost) async throws {
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
                try await startOver(on: engine)
            } catch let rewound as ServerRewound where !startedOver {
                startedOver = true
                report.serverRestored = true
                logger.notice("the server went back in time (restored from a backup): sending back what this device holds")
                report.sentBackAfterRestore += try await startOver(sendingBack: rewound, on: engine)
            }
        }
    }

    /// The server answered 410 to a pull: the cursor is older than the deletions it keeps.
    private struct CursorExpired: Error {}

    /// The server's history lost commits this device heard of (`SyncPullResponse.rewound`), and
    /// the spaces the person is in as that page said (the engine may not have heard them yet).
    private struct ServerRewound: Error {
        let tags: [String]
        let spaces: [SpaceSummary]?
    }

    /// Deletes every mirrored record no waiting change is about and sends every subscription back
    /// to a first pull, in one transaction: what the device has still to send stays and goes.
    /// With `sendingBack` (tags of commits the server lost), first queues every record and
    /// deletion the device holds of their spaces to go back (`ServerHistory.sendBack`), so that
    /// those are kept and sent too; returns how many were queued.
    @discardableResult
    private func startOver(sendingBack rewound: ServerRewound? = nil, on engine: isolated any SyncRoundHost) async throws -> Int {
        let mirrors = Array(collections.values), collections = self.collections
        let node = store.clock.node
        let queued = try await store.writer.write { db in
            var queued = 0
            if let rewound {
                // NB: the spaces first: a device whose pulls never got through knows no personal space,
                // and its own records, kept without a space id, must be found there.
                if let spaces = rewound.spaces { try SpaceTable.replace(with: spaces, db: db) }
                queued = try ServerHistory.sendBack(try ServerHistory.spaces(heardAs: rewound.tags, db), mirrors: collections, node: node, db)
            }
            try ServerHistory.forget(space: nil, stamps: false, db)
            // NB: what was kept comes again with the records.
            try KeptFields.forget(space: nil, db)
            for mirror in mirrors { try mirror.deleteRecordsWithoutWaitingChanges(in: db) }
            let holdsNothing = try mirrors.allSatisfy { try !$0.hasRecords(in: db) }
            try SubscriptionTable.startOver(fresh: holdsNothing, db: db)
            return queued
        }
        engine.refreshStatus()
        return queued
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
    private nonisolated(nonsending) func pull(_ subscription: SubscriptionRow, isLastSubscription: Bool,
                                              _ report: inout SyncReport) async throws {
        var row = subscription
        var remaining: Int?
        let seen = try await store.reader.read { db in try ServerHistory.seenTags(db) }
        var ahead: Task<SyncWire.PulledPage, any Error>?
        defer { ahead?.cancel() }
        while true {
            let counting = !row.complete && (remaining ?? 0) <= 0
            let page: SyncWire.PulledPage
            if let fetched = ahead {
                ahead = nil
                page = try await fetched.value
            } else {
                page = try await fetchPage(row, since: row.since, counting: counting, seen: seen)
            }
            connectivity.reportAnswer()
            let personalSpace = page.personalSpace
            let records = page.changes.map { $0.remote(personalSpace: personalSpace) }
            let isLast = !page.hasMore || records.isEmpty
            remaining = isLast ? 0 : page.remaining ?? max(0, (remaining ?? 0) - records.count)
            if !isLast {
                let next = row, counted = !row.complete && (remaining ?? 0) <= 0
                ahead = Task { try await self.fetchPage(next, since: page.cursor, counting: counted, seen: seen) }
            }
            row.cursor = page.cursor
            if !row.complete {
                row.received += records.count
                row.total = max(row.total, row.received + (remaining ?? 0))
                row.complete = isLast
                row.updatedAt = UnixMillis.now()
            }
            let (clockProblems, echoes, failed, forgotten) = try await PageApply(store: store, collections: collections, logger: logger)
                .write(records, of: page, subscription: row, isLast: isLast && isLastSubscription)
            removeFiles(forgotten)
            report.pulled += records.count - echoes
            report.echoes += echoes
            report.rejected += failed.count
            report.rejections += failed.map { (entryID: $0.id, message: $0.message) }
            for (id, message) in failed { logger.warning("change failed", metadata: ["id": "\(id)", "message": "\(message)"]) }
            if let problem = clockProblems.first {
                status.update { $0.lastError = problem }
            }
            if !subscription.complete { publishProgress() }
            if isLast { return }
        }
    }

    /// One page of a subscription's pull from `since`. NB: `@concurrent`, off the engine's actor:
    /// the read-ahead fetches a page while the round writes the one before.
    @concurrent private func fetchPage(_ row: SubscriptionRow, since: String?, counting: Bool, seen: [String]) async throws
        -> SyncWire.PulledPage {
        var query = URLComponents()
        query.queryItems = [URLQueryItem(name: "limit", value: String(configuration.pullLimit))]
            + (since.map { [URLQueryItem(name: "since", value: $0)] } ?? [])
            + row.query.map { URLQueryItem(name: "collection", value: $0) }
            + row.filledFields.map { URLQueryItem(name: "field", value: $0) }
            + (configuration.app.map { [URLQueryItem(name: "app", value: "\($0.id.rawValue)@\($0.version)")] } ?? [])
            + (counting ? [URLQueryItem(name: "count", value: "true")] : [])
            + (seen.isEmpty ? [] : [URLQueryItem(name: "seen", value: SyncHistory.seenValue(seen))])
        // NB: `+` in a bound is a plus, not a space, to the server.
        let encoded = (query.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        let (response, body) = try await link.send(.get, "/v1/sync/pull?" + encoded, json: nil, operationID: "syncPull")
        if response.status.code == 410 { throw CursorExpired() }
        guard response.status == .ok else { throw RemoteFailure.answer(response.status.code, body) }
        let page = try JSONDecoder().decode(SyncWire.PulledPage.self, from: body)
        if let rewound = page.rewound, !rewound.isEmpty { throw ServerRewound(tags: rewound, spaces: page.spaces) }
        return page
    }

    /// Puts a subscription's progress in the status, folded into its priority's.
    private func publishProgress() {
        let subscriptions = self.subscriptions
        guard let firstSync = try? store.reader.read({ db in try SubscriptionTable.progress(of: subscriptions, db: db) }) else { return }
        status.update { $0.firstSync = firstSync }
    }
}
