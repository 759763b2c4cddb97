import EventualAPI
import Foundation
import GRDB

/// What a sync round asks of the store besides its tables: the server's time, and putting entries
/// back after a failed request (the push and the call runner both do).
extension LocalStore {
    /// Takes in the server's time from the latest answer, so that stamps follow it when this
    /// device's clock is wrong.
    nonisolated(nonsending) func learnServerTime(from link: ServerLink) async {
        guard let serverNow = link.serverTime.now() else { return }
        try? await learnServerTime(serverNow)
    }

    /// Puts entries back after a failed request: with backoff, or without counting an attempt
    /// when only a sign-in is missing.
    nonisolated(nonsending) func reschedule(_ entries: [OutboxEntry], after failure: RemoteFailure, backoff: Backoff) async throws {
        let attempts = entries.map(\.attempts).max() ?? 0
        let isSignIn: Bool = if case .unauthorized = failure { true } else { false }
        let retryAt = isSignIn ? 0 : UnixMillis.now() + backoff.delay(afterFailures: attempts).milliseconds
        if case .rejected(_, let message) = failure, entries.count == 1 {
            try await writer.write { db in try OutboxTable.markFailed(id: entries[0].id, message: message, db: db) }
            return
        }
        try await writer.write { db in
            try OutboxTable.reschedule(ids: entries.map(\.id), retryAt: retryAt, error: failure.description,
                                       countsAsAttempt: !isSignIn, db: db)
        }
    }
}
