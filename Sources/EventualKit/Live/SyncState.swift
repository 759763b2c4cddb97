import EventualAPI
import GRDB

/// Where a record's changes made on this device stand with the server.
public enum SyncState: Sendable, Hashable {
    /// The server has every change made here.
    case confirmed
    /// `count` changes wait to be sent (or are being sent).
    case pending(count: Int)
    /// The server refused a change (`reason`, its words): the person settles it
    /// (`SignedInDevice.settle`). Wins over changes that wait.
    case failed(reason: String)
}

/// The rows of a live query as of one committed transaction, each with its sync state.
public struct LiveSnapshot<Row: Sendable>: Sendable {
    public let rows: [LiveRow<Row>]
    /// Unix milliseconds of the last round that pushed and pulled everything; nil before the first.
    public let lastSyncedAt: Int64?
}

/// One row of a live query and the sync state of its record.
public struct LiveRow<Row: Sendable>: Sendable {
    public let row: Row
    public let state: SyncState
}

extension LiveSnapshot: Equatable where Row: Equatable {}
extension LiveRow: Equatable where Row: Equatable {}

/// The sync states of records, read from the outbox.
enum SyncStates {
    /// The state of each of `ids` of `collection` (`.confirmed` when nothing waits), one query per 500 ids.
    /// A record that refers to an attachment whose upload the server refused is refused too
    /// (`mirror` finds them): the person settles the upload, and a change refused wins.
    static func of(_ collection: String, ids: some Collection<String>, mirror: TableMirror?, db: Database) throws -> [String: SyncState] {
        var waiting: [String: Int] = [:], refused: [String: String] = [:]
        for chunk in Array(Set(ids)).chunked(into: 500) {
            // NB: ordered by position: the newest refusal's words are the ones shown.
            let rows = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT record_id, state, last_error FROM eventual_outbox
                WHERE operation = ? AND kind = 'change' AND record_id IN (\(OutboxTable.placeholders(chunk.count)))
                ORDER BY position
                """), arguments: StatementArguments([collection]) + StatementArguments(chunk))
            for row in rows {
                let id: String = row["record_id"]
                if row["state"] as String == OutboxEntry.State.failed.rawValue {
                    refused[id] = row["last_error"] ?? "refused by the server"
                } else {
                    waiting[id, default: 0] += 1
                }
            }
        }
        let uploadRefused = try mirror.map { try AttachmentHolders.refused(among: ids, of: $0, db) } ?? [:]
        var states: [String: SyncState] = [:]
        for id in ids {
            states[id] = (refused[id] ?? uploadRefused[id]).map { .failed(reason: $0) } ?? waiting[id].map { .pending(count: $0) } ?? .confirmed
        }
        return states
    }
}
