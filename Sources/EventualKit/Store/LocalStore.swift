import EventualAPI
import Foundation
import GRDB
import Synchronization

/// One signed-in user's database on this device: the app's tables, the outbox, the sync cursor
/// and cached server data, in one SQLite file (WAL). Every local change goes through
/// `write(_:)`, which applies it and appends it to the outbox in one transaction.
public final class LocalStore: Sendable {
    /// The GRDB writer. NB: not public: every app write goes through `write(_:)`, so that no
    /// change can skip the outbox; the engine's own tables are the engine's.
    let writer: any DatabaseWriter
    /// Apps read their own tables with `reader.read { db in ... }`.
    public var reader: any DatabaseReader { writer }
    /// Stamps every change made through `write(_:)`.
    public let clock: HybridLogicalClock
    /// This device's clock, in Unix milliseconds.
    let wallClock: @Sendable () -> Int64
    private let didWrite: ChangeSignal
    private let otherProcesses: OtherProcesses
    /// The mirror of each synced collection, by the collection's name: where a rule that refers
    /// to another collection looks records up before a write, and where the records that refer
    /// to an attachment are found.
    private let registeredMirrors = Mutex<[String: TableMirror]>([:])

    /// Opens (creating if needed) the database at `path`, applies the engine's migrations and
    /// then the app's, in order. `wallClock` is this device's clock in Unix milliseconds (a test
    /// sets a wrong one).
    public convenience init(path: String, migrations: [LocalMigration] = [], maxClockDrift: Duration = .seconds(300),
                            wallClock: @escaping @Sendable () -> Int64 = { UnixMillis.now() }) throws {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // NB: here, before the pool turns WAL on: that writes the file's first page, and with
            // it the mode for good (`Compaction.prepare` is then too late).
            if !db.configuration.readonly { try Compaction.prepare(db) }
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try self.init(writer: pool, migrations: migrations, maxClockDrift: maxClockDrift, wallClock: wallClock)
    }

    /// A store on any GRDB writer (an in-memory `DatabaseQueue` in tests).
    public init(writer: any DatabaseWriter, migrations: [LocalMigration] = [], maxClockDrift: Duration = .seconds(300),
                wallClock: @escaping @Sendable () -> Int64 = { UnixMillis.now() }) throws {
        try writer.writeWithoutTransaction { db in try Compaction.prepare(db) }
        var migrator = DatabaseMigrator()
        EngineSchema.register(in: &migrator)
        for migration in migrations {
            migrator.registerMigration(migration.name, migrate: migration.migrate)
        }
        try migrator.migrate(writer)
        let (node, lastStamp, serverOffset) = try writer.write { db in try EngineSchema.clockState(db) }
        self.writer = writer
        self.wallClock = wallClock
        self.clock = HybridLogicalClock(node: node, resumingAfter: lastStamp, maxDrift: maxClockDrift, serverOffset: serverOffset,
                                        wallClock: wallClock)
        self.didWrite = ChangeSignal()
        self.otherProcesses = OtherProcesses(writer: writer)
        // NB: an entry "in flight" when the process died may or may not have reached the server;
        // sending it again is safe (its id makes the server answer `duplicate`).
        try writer.write { db in try OutboxTable.resetInFlight(db) }
    }

    /// Applies a local change and queues what the server must hear of it, atomically.
    @discardableResult
    public func write<T: Sendable>(_ body: @Sendable (LocalTransaction) throws -> T) async throws -> T {
        let clock = self.clock
        let mirrors = self.mirrors
        let result = try await writer.write { db in
            let transaction = LocalTransaction(db: db, clock: clock, mirrors: mirrors)
            let value = try body(transaction)
            if transaction.stampedChanges {
                try EngineSchema.saveLastStamp(clock.latest, db)
            }
            return value
        }
        didWrite.fire()
        return result
    }

    /// Takes in the server's time now (from its last answer), kept for the next process too.
    func learnServerTime(_ serverNow: Int64) async throws {
        clock.learn(serverNow: serverNow)
        let wall = wallClock()
        let offset = serverNow - wall
        // NB: written only when it says more than the saved one: not a write per request.
        let saved = try await reader.read { db in try ServerClockTable.saved(db) }
        guard ServerClockTable.isWorthSaving(offset, at: wall, over: saved) else { return }
        try await writer.write { db in try ServerClockTable.save(offset: offset, learnedAt: wall, db) }
    }

    /// The same, blocking: for a link that learned the time before the store was open (a sign-in).
    func learnServerTimeNow(_ serverNow: Int64) throws {
        clock.learn(serverNow: serverNow)
        let wall = wallClock()
        let offset = serverNow - wall
        try writer.write { db in
            guard ServerClockTable.isWorthSaving(offset, at: wall, over: try ServerClockTable.saved(db)) else { return }
            try ServerClockTable.save(offset: offset, learnedAt: wall, db)
        }
    }

    /// Tells the store which table mirrors each collection (the sync engine does, for its mirrors).
    func register(_ mirrors: [TableMirror]) {
        registeredMirrors.withLock { registered in
            for mirror in mirrors { registered[mirror.collection.name] = mirror }
        }
    }

    /// The mirror of each synced collection, by the collection's name.
    var mirrors: [String: TableMirror] { registeredMirrors.withLock { $0 } }

    /// Fires after every committed `write(_:)`: the sync engine listens to send soon.
    public var writes: AsyncStream<Void> { didWrite.stream() }

    /// What other processes on this device do to this database from now on (checked every
    /// second, one check for all listeners): a commit, or the file removed. Never this process's
    /// own writes. A store in memory has none: the stream ends at once.
    public func otherProcessEvents() async -> AsyncStream<OtherProcessEvent> { await otherProcesses.events() }

    /// This device's node id in HLC stamps.
    public var node: String { clock.node }
}

/// An app's own schema change, applied after the engine's. Append only; never edit a shipped one.
public struct LocalMigration: Sendable {
    public let name: String
    public let migrate: @Sendable (Database) throws -> Void

    public init(_ name: String, migrate: @escaping @Sendable (Database) throws -> Void) {
        self.name = name
        self.migrate = migrate
    }
}

/// The handle an app gets inside `LocalStore.write`: the database, and the two ways to tell the
/// server about it.
public final class LocalTransaction {
    public let db: Database
    let clock: HybridLogicalClock
    /// The mirror of each synced collection, by name.
    let mirrors: [String: TableMirror]
    private(set) var stampedChanges = false

    init(db: Database, clock: HybridLogicalClock, mirrors: [String: TableMirror] = [:]) {
        self.db = db
        self.clock = clock
        self.mirrors = mirrors
    }

    /// Queues a change of a record in a synced collection: fields set, amounts added to its
    /// counter fields, or a delete, in `space` (nil: the person's own; only for a collection in
    /// spaces). The app has already written the same change to its own table in this transaction.
    @discardableResult
    public func recordChange(
        _ collection: SyncCollection, id recordID: String, fields: [String: SyncValue] = [:],
        adding deltas: [String: Double] = [:], deleted: Bool = false, space: String? = nil
    ) throws -> String {
        try recordChange(collection, id: recordID, fields: fields, adding: deltas, deleted: deleted, space: space, createsRecord: false)
    }

    /// `createsRecord`: the change makes the record, with an id made on this device (a mirror's insert).
    func recordChange(
        _ collection: SyncCollection, id recordID: String, fields: [String: SyncValue], adding deltas: [String: Double],
        deleted: Bool, space: String?, createsRecord: Bool
    ) throws -> String {
        let space = try spaceOfChange(space, collection)
        for name in fields.keys where collection.fields[name] == nil {
            throw LocalStoreError.unknownField(collection: collection.name, field: name)
        }
        for (name, amount) in deltas {
            guard collection.fields[name]?.type == .counter else {
                throw LocalStoreError.notACounter(collection: collection.name, field: name)
            }
            guard amount.isFinite else { throw LocalStoreError.notFinite(field: name) }
        }
        // NB: checked before the change is queued, by the server's own rules: a change it refuses
        // whole would be sent again, and refused again, for ever, holding up everything after it.
        if let problem = SyncChangeLimits.problem(inChangeOf: collection, recordID: recordID, space: space, fields: fields, deltas: deltas) {
            throw LocalStoreError.refusedByServer(problem)
        }
        let stamp = clock.tick()
        stampedChanges = true
        var payload = ChangePayload(hlc: stamp.description, fields: fields, deltas: deltas.isEmpty ? nil : deltas, deleted: deleted)
        if createsRecord { payload.creates = true }
        return try OutboxTable.append(
            kind: .change, operation: collection.name, recordID: recordID, space: space,
            payload: try JSONEncoder.sorted.encode(payload), coalescingKey: nil, createsRecord: createsRecord, db: db
        )
    }

    /// The space a change of `collection` goes to, as the outbox and a mirrored row keep it: nil
    /// for the person's own, whether named or not.
    func spaceOfChange(_ space: String?, _ collection: SyncCollection) throws -> String? {
        guard let space else { return nil }
        guard collection.scope == .space else { throw LocalStoreError.notInSpaces(collection: collection.name) }
        return try SpaceTable.isPersonal(space, db) ? nil : space
    }

    /// Whether a call queued with `coalescingKey` waits unsent: a newer value can then replace it
    /// (`enqueueCall` with the same key) without adding a request.
    public func hasPendingCall(coalescingKey: String) throws -> Bool {
        try OutboxTable.hasPending(coalescingKey: coalescingKey, db: db)
    }

    /// Queues a call to an ordinary endpoint, run by the handler registered for `operation`
    /// once the network is back, with the entry's id as its `Idempotency-Key`. A newer call
    /// with the same `coalescingKey` replaces an unsent older one.
    @discardableResult
    public func enqueueCall(_ operation: String, payload: some Encodable, coalescingKey: String? = nil) throws -> String {
        try enqueueCall(operation, payload: payload, coalescingKey: coalescingKey, space: nil)
    }

    /// A call about `space` (a space call).
    @discardableResult
    func enqueueCall(_ operation: String, payload: some Encodable, coalescingKey: String? = nil, space: String?) throws -> String {
        try OutboxTable.append(
            kind: .call, operation: operation, recordID: nil, space: space,
            payload: try JSONEncoder.sorted.encode(payload), coalescingKey: coalescingKey, db: db
        )
    }
}

/// What a local write can refuse.
public enum LocalStoreError: Error, Equatable, CustomStringConvertible {
    case unknownField(collection: String, field: String)
    case notACounter(collection: String, field: String)
    case notFinite(field: String)
    /// A change that names a space, of a collection whose records are a person's own.
    case notInSpaces(collection: String)
    /// A change the server would refuse its whole push for (`SyncChangeLimits`): a control
    /// character, a number no record holds, a space id of a length not allowed. Refused before
    /// anything is queued.
    case refusedByServer(SyncChangeProblem)

    public var description: String {
        switch self {
        case .unknownField(let collection, let field): return "'\(field)' is not a field of \(collection)"
        case .notACounter(let collection, let field): return "'\(field)' of \(collection) is not a counter: set it instead"
        case .notFinite(let field): return "the amount added to '\(field)' must be a finite number"
        case .notInSpaces(let collection): return "the records of \(collection) are one person's: they cannot be put in a space"
        case .refusedByServer(let problem): return problem.description
        }
    }
}

/// The body of a record-change entry. `deltas` is absent in entries written before counters.
struct ChangePayload: Codable, Sendable, Equatable {
    let hlc: String
    let fields: [String: SyncValue]
    let deltas: [String: Double]?
    let deleted: Bool
    /// A record sent back after the server was restored (`ServerHistory.sendBack`), with the
    /// server's merge state it had (`MergeState.text`); absent otherwise.
    var restores: Bool? = nil
    var state: String? = nil
    /// The change made its record (an insert): made again after a deletion, the record starts
    /// clean on the server; absent otherwise.
    var creates: Bool? = nil

    /// The same change with another stamp (a refusal for this device's clock).
    func stamped(_ hlc: String) -> ChangePayload {
        var copy = ChangePayload(hlc: hlc, fields: fields, deltas: deltas, deleted: deleted)
        copy.restores = restores
        copy.state = state
        copy.creates = creates
        return copy
    }
}

extension JSONEncoder {
    /// Keys sorted, so that equal payloads are equal bytes.
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
