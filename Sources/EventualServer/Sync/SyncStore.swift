import EventualAPI
import EventualStorage
import Foundation

/// A pushed change as the store receives it: its id, the space it writes to, and the validated
/// change or why it was refused.
struct SyncSubmission: Sendable {
    let id: String
    let space: String
    let change: Result<ValidatedChange, SyncRejection>
}

/// What became of one pushed change.
enum SyncOutcome: Sendable, Equatable {
    case applied
    case duplicate
    case rejected(String)
    /// Merged, the record would break one of its collection's rules: not written. `current` is
    /// the server's record as the push left it (nil when it holds none).
    case refused(SyncRuleViolation, current: SyncedRecord?)
}

/// A record as a pull returns it: its space, its merged fields, whether it is deleted, its newest
/// stamp, the counter value of its last change and the username of whoever made it (nil if unknown).
struct SyncedRecord: Sendable, Equatable {
    let space: String
    let collection: String
    let recordID: String
    let fields: [String: SyncValue]
    let isDeleted: Bool
    let newestStamp: HLCStamp?
    let seq: Int64
    let changedBy: String?
    /// Its merge state as a pull sends it (`MergeState.text`).
    let state: String?

    init(space: String, collection: String, recordID: String, fields: [String: SyncValue], isDeleted: Bool, newestStamp: HLCStamp?,
         seq: Int64, changedBy: String?, state: String? = nil) {
        self.state = state
        self.space = space
        self.collection = collection
        self.recordID = recordID
        self.fields = fields
        self.isDeleted = isDeleted
        self.newestStamp = newestStamp
        self.seq = seq
        self.changedBy = changedBy
    }

    init(space: String, collection: String, recordID: String, state: SyncRecordState, seq: Int64, changedBy: String?) {
        self.init(space: space, collection: collection, recordID: recordID, fields: state.fields, isDeleted: state.isDeleted,
                  newestStamp: state.newestStamp, seq: seq, changedBy: changedBy, state: state.merge.text)
    }

    /// A record as a pull reads it. NB: a pull of a first sync reads tens of thousands of rows:
    /// decoding their stamps and counter deltas (all a merge needs) took half of the server's time,
    /// and a pull needs only the newest stamp, and `deleted`, which the row says (NULL only for a
    /// row from before migration 12, which is then read whole).
    init(space: String, collection: String, recordID: String, pulled columns: SyncRecordState.Columns, deleted: Int?,
         seq: Int64, changedBy: String?) throws {
        guard let deleted else {
            self.init(space: space, collection: collection, recordID: recordID, state: try SyncRecordState(columns), seq: seq,
                      changedBy: changedBy)
            return
        }
        self.init(space: space, collection: collection, recordID: recordID, fields: try SyncRecordState.fields(of: columns),
                  isDeleted: deleted == 1,
                  newestStamp: [SyncRecordState.newestStamp(in: [columns.fieldStamps, columns.counterDeltas]),
                                columns.tombstone.flatMap(HLCStamp.init(parsing:))].compactMap { $0 }.max(),
                  seq: seq, changedBy: changedBy,
                  state: MergeState.text(stamps: columns.fieldStamps, deltas: columns.counterDeltas, tombstone: columns.tombstone))
    }
}

/// One page of a pull.
struct SyncPage: Sendable {
    let records: [SyncedRecord]
    /// The position reached in each of the person's spaces (unchanged where nothing was new).
    let cursor: SyncCursor
    /// Some space has more changes after `cursor`.
    let hasMore: Bool
    /// Every space the person is a member of, in the order the page reads them; a shared one with
    /// its members, the owner first.
    let spaces: [SpaceSummary]
    /// The spaces the cursor asked about that the person is no longer a member of.
    let removed: [SpaceRef]
    /// How many records the subscription has still to send after this page, when asked.
    var remaining: Int? = nil
    /// The newest commit of each of the person's spaces (`SyncHistory`).
    var heads: [SyncHead] = []
    /// Of the tags the device said it saw, those the server's history lost: the page then holds
    /// no record, and the device sends back what it has and starts over.
    var rewound: [String] = []
}

/// Spaces' synced records: pushes merged per field, and pulls of what changed after a cursor.
///
/// Why a cursor never skips a change: every record carries `seq`, a value of its space's counter
/// (`sync_counters`) taken by the push that last changed it, and a pull returns, space by space,
/// `seq > ` the cursor's position in that space. A push locks the counters of its spaces as its
/// first statement (`SpaceGate.enter`, which says how) and holds them until it commits. So the pushes to one space run one after the other: a push cannot take
/// seq values of a space until the previous one has committed or rolled back (and a rollback
/// undoes its counter update too, so its values are reused, not lost). Seq values of a space
/// therefore become visible in increasing order, and a pull's read of a space, a single statement
/// on one snapshot, sees every seq up to the newest committed one and none above it. Anything
/// committed after that read gets a seq above every seq it could return, so `seq > position`
/// finds it. (A database sequence would not do: a transaction may take value 7, commit after
/// another one took and committed 8, and a pull between the two commits moves its cursor past 7
/// for ever.)
///
/// The lock also serialises the merges themselves: a push reads the records it changes after it
/// holds the lock, so it always merges into the latest committed state; and it reads the pusher's
/// roles after it, so a change of members (which takes the same lock) is never half seen.
///
/// Rules (`SyncCollection.rules`) are checked on each record as merged, before it is written, in
/// the push's transaction: a change that breaks one is refused alone and the rest of the batch
/// applies. So are the owners' quotas (`PushQuotas`): a push is never refused for one. Two consumptions of the last unit cannot both pass, since the second push merges
/// into what the first committed. A rule's lookups see the batch's earlier changes; those in the
/// record's own space read under its lock, those in the pusher's other spaces (a transfer from a
/// personal account into a shared one) read their latest committed state.
///
/// Its phases are files of their own: the push (`SyncPush.swift`, the merge in `PushMerge`), the
/// pull (`SyncPull.swift`) and housekeeping's purge (`SyncPurge.swift`), over the stored rows
/// (`SyncRecordRows`) and the spaces' gate (`SpaceGate`).
struct SyncStore: Sendable {
    let database: Database
    /// The apps served, whose collections' rules pushes are checked against.
    var catalog: AppCatalog = .builtIn

    /// Every served collection, by name, as deployed now.
    var collections: [String: SyncCollection] { catalog.collections }

    /// The newest commit of each of `spaceIDs` (`SyncHistory`).
    func heads(of spaceIDs: [String]) async throws -> [SyncHead] {
        try await database.withConnection { sql in try await SpaceGate.heads(of: spaceIDs, on: sql) }
    }

    /// Of `tags`, those the history does not hold (`SyncHistory`).
    func unknownTags(_ tags: [String]) async throws -> [String] {
        guard !tags.isEmpty else { return [] }
        return try await database.withConnection { sql in try await SpaceGate.unknownTags(tags, on: sql) }
    }
}

/// A record's place: its space, its collection and its id.
struct SyncRecordKey: Hashable, Sendable {
    let space: String
    let collection: String
    let recordID: String
}
