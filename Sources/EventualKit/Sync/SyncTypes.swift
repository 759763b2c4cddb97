import EventualAPI
import Foundation
import GRDB
import OpenAPIRuntime

/// A record as the server holds it after merging every device's changes.
public struct RemoteRecord: Sendable, Equatable {
    public let collection: String
    public let recordID: String
    public let fields: [String: SyncValue]
    public let deleted: Bool
    public let hlc: String
    /// The space the record is in; nil for the person's own.
    public let space: String?
    /// The username of the person whose change the server applied last, when it knows.
    public let changedBy: String?
    /// The server's merge state of the record (`MergeState.text`), when it sends one.
    public var state: String? = nil

    /// The record with every field of `collection` it does not carry (never set on the server) as
    /// null: what a row takes to become exactly the server's record, a refused value in a field
    /// the server never had included.
    func whole(of collection: SyncCollection) -> RemoteRecord {
        guard !deleted else { return self }
        let missing = collection.fields.filter { $0.value.nullable && fields[$0.key] == nil }.map(\.key)
        return RemoteRecord(collection: self.collection, recordID: recordID,
                            fields: fields.merging(missing.map { ($0, SyncValue.null) }) { kept, _ in kept },
                            deleted: deleted, hlc: hlc, space: space, changedBy: changedBy)
    }

    init(collection: String, recordID: String, fields: [String: SyncValue], deleted: Bool, hlc: String,
         space: String? = nil, changedBy: String? = nil) {
        self.collection = collection
        self.recordID = recordID
        self.fields = fields
        self.deleted = deleted
        self.hlc = hlc
        self.space = space
        self.changedBy = changedBy
    }
}

/// Mirrors one synced collection into the app's own table.
public protocol SyncedCollectionStore: Sendable {
    var collection: SyncCollection { get }
    /// Writes the server's state of a record, minding the local edits the server has not
    /// acknowledged yet: a field set here keeps its local value (it is the truth until the server
    /// hears of it), and a counter with pending deltas shows the server's total plus them.
    func apply(_ record: RemoteRecord, pending: PendingEdits, in db: Database) throws
    /// Deletes every record of `space` from this device (the person left it, or was removed);
    /// nothing for a collection whose records are not in spaces.
    func deleteRecords(inSpace space: String, in db: Database) throws
    /// Whether the device holds any record of the collection.
    func hasRecords(in db: Database) throws -> Bool
    /// Deletes every record that no change waiting in the outbox is about: the device starts
    /// over from a first sync and keeps what it has still to send.
    func deleteRecordsWithoutWaitingChanges(in db: Database) throws
    /// The records the device holds in `space` (nil: the person's own), each with its fields:
    /// what it sends back to a server restored from an earlier copy.
    func heldRecords(inSpace space: String?, in db: Database) throws -> [(id: String, fields: [String: SyncValue])]
}

extension SyncedCollectionStore {
    /// None: a store that cannot list its records sends none back (its deletions still go).
    public func heldRecords(inSpace space: String?, in db: Database) throws -> [(id: String, fields: [String: SyncValue])] { [] }
}

/// The local edits of one record that are still in the outbox.
public struct PendingEdits: Sendable, Equatable {
    /// Fields set.
    public var fields: Set<String> = []
    /// The sum of the amounts added to each counter field.
    public var deltas: [String: Double] = [:]
    /// A delete waits: nothing the server says about the record matters until it is sent.
    public var deletes = false

    public init() {}

    mutating func add(_ change: ChangePayload) {
        if change.deleted { deletes = true }
        fields.formUnion(change.fields.keys)
        for (name, amount) in change.deltas ?? [:] { deltas[name, default: 0] += amount }
    }
}

/// What a queued call's handler gets to do its requests.
public struct CallContext: Sendable {
    /// The generated client, authenticated as the signed-in user.
    public let client: Client
    /// The outbox entry's id: send it as `Idempotency-Key` so a replay creates nothing.
    public let idempotencyKey: String
    public let payload: Data
    /// The local store, for a handler that records what the server answered.
    public let store: LocalStore

    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: payload)
    }
}

/// Runs a queued call. It throws a `RemoteFailure` to say whether to retry (`unreachable`,
/// `transient`: the round stops), give up (`rejected`, shown to the user) or wait for a sign-in
/// (`unauthorized`), or `CallDeferred` when it waits on something else.
public typealias CallHandler = @Sendable (CallContext) async throws -> Void

/// A call that cannot run yet because it waits on something another device has to do first (an
/// attachment to fetch that is not uploaded yet): it is tried again after a backoff, and the
/// round goes on with the rest, so one waiting call never holds up a sync. `reason` is what
/// `status` says of it meanwhile.
public struct CallDeferred: Error, Sendable, Equatable {
    public let reason: String

    public init(_ reason: String) {
        self.reason = reason
    }
}

/// Tuning of the engine; the defaults suit a phone.
public struct SyncConfiguration: Sendable {
    /// Changes per push request (the server takes up to 500).
    public var batchSize = 500
    /// The most bytes of a push request's body (the server takes 1 MiB by default); a change
    /// larger alone goes alone.
    public var maxBatchBytes = 1024 * 1024
    /// Records per pull request.
    public var pullLimit = 500
    /// Retry spacing of entries that failed for a transient reason.
    public var retry = Backoff(initial: .seconds(1), maximum: .seconds(300))
    /// How long a call may wait on another device (`CallDeferred`) before it is failed with its
    /// reason, for the person to retry or discard: what it waits for may never come (that device
    /// dropped its photo).
    public var longestDeferral: Duration = .seconds(3 * 86_400)
    /// How often the engine syncs when nothing else asks it to.
    public var interval: Duration = .seconds(60)
    /// The live channel: held while the engine runs (`start()`), it starts a pull when the
    /// server signals a change; `interval` is then only the fallback while it is down.
    public var live = LiveSettings()
    /// Whether each round sends the waiting usage events (`Analytics`); false for a user who opted out.
    public var sendsAnalytics = true
    /// How many usage events may wait, and for how long, before the oldest are dropped.
    public var analyticsLimits = Analytics.Limits()
    /// The app this device runs, at its declaration's version: named in each push, so that a
    /// server serving an earlier version keeps the changes that use what it lacks waiting on the
    /// device (`newer_app`) instead of failing them. Nil: none named (a test's bare engine).
    public var app: EventualApp?

    public init() {}
}

/// What one sync round did.
public struct SyncReport: Sendable {
    /// Changes the server acknowledged (applied now or before).
    public var sent = 0
    /// Of those, the ones it had applied already (a replay after a lost answer).
    public var duplicates = 0
    /// Entries that moved to failed in this round.
    public var rejected = 0
    /// Their ids and the server's reasons.
    public var rejections: [(entryID: String, message: String)] = []
    /// Of `rejected`, the queued calls (not changes of a record): retried or discarded, never settled.
    public var rejectedCalls = 0
    /// Changes the server refused only because this device's clock was ahead, stamped again by
    /// the server's time and sent again in this round.
    public var restamped = 0
    /// Changes the server still refuses because this device's clock is ahead: they wait (never
    /// dropped) and go once the clock is right. Their ids and the server's reasons follow.
    public var clockRefused = 0
    public var clockRefusals: [(entryID: String, message: String)] = []
    /// Changes that wait for the server to serve this device's version of the app (`newer_app`),
    /// after the round: neither failed nor sent again until it does.
    public var waitingForNewerApp = 0
    /// The server's words for the first of them, when this round heard it.
    public var newerAppMessage: String?
    /// How many seconds this device's clock is ahead of the server's (negative: behind), when it
    /// is off by more than a few seconds; stamps follow the server's time meanwhile.
    public var clockAheadBySeconds: Int64?
    /// Queued calls completed.
    public var calls = 0
    /// Of `calls`, how many of each operation ("attachments.upload": 2), and of `rejectedCalls`
    /// the same: a command says what went in its own words without diffing the outbox.
    public var callsByOperation: [String: Int] = [:]
    public var rejectedCallsByOperation: [String: Int] = [:]
    /// Queued calls that wait on something another device has to do first (`CallDeferred`):
    /// tried again later; the round went on without them.
    public var deferredCalls = 0
    /// Records brought in by the pull that other devices changed last.
    public var pulled = 0
    /// Records the pull brought back whose last change was this device's own (already here).
    public var echoes = 0
    /// Usage events the server acknowledged (filed now or before).
    public var events = 0
    /// Of those, events the server had filed already (a batch sent again after a lost answer).
    public var eventDuplicates = 0
    /// Usage events the server refused (dropped, counted).
    public var eventsRejected = 0
    /// The server could not file usage events this round (its daily limit, a restart): they wait
    /// on the device, and the person's own changes are not held up by them.
    public var eventsDeferred = false
    /// The server no longer kept what this device's cursor had missed (it was offline longer than
    /// the server keeps deleted records): the device started over from a first sync, keeping its
    /// waiting changes.
    public var startedOver = false
    /// The server had gone back in time (a backup restored) since this device last heard it: the
    /// device sent back this many records and deletions it held, and pulled again from nothing.
    public var sentBackAfterRestore = 0
    /// Whether the server was found restored in this round (`sentBackAfterRestore` may be 0).
    public var serverRestored = false
    /// Why the round stopped early, if it did. A push the server failed or refused whole stops
    /// only the sending: the round still pulls, and this says why the changes wait.
    public var failure: RemoteFailure?
    /// The round pulled everything it was to pull (whatever became of its push).
    var pullFinished = false
    /// False when the caller's budget ran out before the round ended (`SyncEngine.syncNow`): the
    /// round goes on in the background, and this report counts nothing of it.
    public var finished = true

    /// A round still running when its caller stopped waiting.
    static var unfinished: SyncReport {
        var report = SyncReport()
        report.finished = false
        return report
    }

    /// Everything queued reached the server and nothing was refused: only then may a command say "Synced".
    public var isComplete: Bool { finished && failure == nil && rejected == 0 && clockRefused == 0 }

    /// Changes the server refused in this round, for good or for the clock.
    public var refused: Int { rejected + clockRefused }

    /// How many calls completed whose operation `matches` ("spaces." prefixes a household's).
    public func calls(where matches: (String) -> Bool) -> Int {
        callsByOperation.filter { matches($0.key) }.values.reduce(0, +)
    }

    /// How many calls the server refused whose operation `matches`.
    public func rejectedCalls(where matches: (String) -> Bool) -> Int {
        rejectedCallsByOperation.filter { matches($0.key) }.values.reduce(0, +)
    }

    public init() {}
}

/// Something a UI may tell its user once.
public enum SyncEvent: Sendable, Equatable {
    /// Queued work reached the server; `afterOffline` when it waited for the network to return.
    case delivered(count: Int, afterOffline: Bool)
    /// The server refused an entry for good.
    case rejected(entryID: String, message: String)
    /// The access token is no longer accepted: sign in again; nothing is lost meanwhile.
    case needsSignIn
}

/// Everything a status bar shows.
public struct SyncStatus: Sendable, Equatable {
    public var connectivity: Connectivity = .unknown
    public var pending = 0
    public var failed = 0
    public var isSyncing = false
    public var needsSignIn = false
    /// Unix milliseconds of the last round that pushed and pulled everything.
    public var lastSyncAt: Int64?
    public var lastError: String?
    public var lastEvent: SyncEvent?
    /// The first sync of each priority of the app's subscriptions, most urgent first.
    public var firstSync: [PullProgress] = []
    /// The live channel is up: another device's change starts a pull here as it is written,
    /// rather than at the next timer or write.
    public var isLive = false
    /// The live channel is being opened for the first time since the engine started, neither up
    /// nor failed yet: a screen says "connecting", not "not live", for those few milliseconds.
    public var isGoingLive = false

    public init() {}

    /// Every subscription of `priority` and the more urgent ones has pulled everything once.
    public func hasSynced(priority: Int) -> Bool {
        let concerned = firstSync.filter { $0.priority <= priority }
        return !concerned.isEmpty && concerned.allSatisfy(\.isComplete)
    }
}
