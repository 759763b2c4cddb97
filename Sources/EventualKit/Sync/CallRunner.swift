import EventualAPI
import Foundation
import GRDB

/// Runs the queued calls: the calls phase of a round, and each space call the push meets among
/// the changes (`SyncPusher`). A call is done, failed with the server's words, deferred while it
/// waits on another device, or put back for later.
struct CallRunner: Sendable {
    private let store: LocalStore
    private let link: ServerLink
    private let connectivity: ConnectivityMonitor
    private let configuration: SyncConfiguration
    /// The app's handlers and the engine's own, by operation.
    private let calls: [String: CallHandler]

    init(store: LocalStore, link: ServerLink, connectivity: ConnectivityMonitor, configuration: SyncConfiguration,
         calls: [String: CallHandler]) {
        self.store = store
        self.link = link
        self.connectivity = connectivity
        self.configuration = configuration
        self.calls = calls
    }

    /// The calls other than space calls, which went with the changes.
    nonisolated(nonsending) func runCalls(_ report: inout SyncReport) async throws {
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
    nonisolated(nonsending) func run(_ entry: OutboxEntry, _ report: inout SyncReport) async throws {
        guard let handler = calls[entry.operation] else {
            let message = "This app version cannot send '\(entry.operation)'"
            try await store.writer.write { db in try OutboxTable.markFailed(id: entry.id, message: message, db: db) }
            report.rejected += 1
            report.rejectedCalls += 1
            report.rejectedCallsByOperation[entry.operation, default: 0] += 1
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
                report.rejectedCallsByOperation[entry.operation, default: 0] += 1
                report.rejections.append((entry.id, message))
                return
            }
            // NB: its next try is after a backoff; this round does not claim it again (runCalls).
            try await store.reschedule([entry], after: .transient(status: 409, message: deferred.reason),
                                       backoff: configuration.retry)
            report.deferredCalls += 1
            return
        } catch {
            let failure = RemoteFailure.from(error)
            try await store.reschedule([entry], after: failure, backoff: configuration.retry)
            if case .rejected(_, let message) = failure {
                report.rejected += 1
                report.rejectedCalls += 1
                report.rejectedCallsByOperation[entry.operation, default: 0] += 1
                report.rejections.append((entry.id, message))
                connectivity.reportAnswer()
                return
            }
            throw failure
        }
        connectivity.reportAnswer()
        try await store.writer.write { db in try OutboxTable.remove(ids: [entry.id], db: db) }
        report.calls += 1
        report.callsByOperation[entry.operation, default: 0] += 1
    }
}
