import EventualAPI
import Dispatch
import Foundation
import GRDB

extension LocalStore {
    /// Watches a query of a mirrored table: the snapshot now, then one after every committed
    /// transaction that changes the rows or their sync states (a local write, a pulled page, a
    /// change sent or refused), never half of one; a write to other tables emits nothing.
    /// `fetch` reads the rows (it may read other tables, named in `alsoTracking`); `id` gives a
    /// row's record id. Cancelling the task that iterates the stream releases the observation.
    public func observe<Row: Sendable & Equatable>(
        _ mirror: TableMirror, alsoTracking tables: [String] = [], id: @escaping @Sendable (Row) -> String,
        fetch: @escaping @Sendable (Database) throws -> [Row]
    ) -> AsyncThrowingStream<LiveSnapshot<Row>, any Error> {
        let collection = mirror.collection.name
        // NB: the outbox tells states; `eventual_state` (the cursor, the last stamp, the last sync) is
        // not tracked: it changes with every round and every write, and alone changes no row.
        let region = ([mirror.table] + tables).map { Table($0) as any DatabaseRegionConvertible } + [Table("eventual_outbox")]
        let observation = ValueObservation.tracking(regions: region) { db in
            let rows = try fetch(db)
            let states = try SyncStates.of(collection, ids: rows.map(id), mirror: mirror, db: db)
            let lastSync = try EngineSchema.value(.lastSyncAt, db).flatMap { Int64($0) }
            return LiveSnapshot(rows: rows.map { LiveRow(row: $0, state: states[id($0)] ?? .confirmed) }, lastSyncedAt: lastSync)
        }
        // NB: a claim (pending to in flight) or another collection's change touches the outbox
        // and changes nothing here: it emits nothing. The time of the last sync is written with
        // the last page: it shows in that page's snapshot, and a round that pulls none of these
        // rows emits nothing.
        .removeDuplicates()
        return stream(of: observation)
    }

    /// Watches an app's own local tables (not synced: queued calls and what they answered, a
    /// catalogue): the value now, then one after every committed transaction that changes one of
    /// `tables` (and, with `outbox`, an outbox entry: queued, sent, refused or dropped) and the
    /// value; never for other tables, never the same value twice. `fetch` reads the value, the
    /// outbox's entries through `Outbox.entries(state:_:)`. Cancelling the iterating task releases it.
    public func observe<Value: Sendable & Equatable>(
        tables: [String], outbox: Bool = false, fetch: @escaping @Sendable (Database) throws -> Value
    ) -> AsyncThrowingStream<Value, any Error> {
        let region = (tables + (outbox ? ["eventual_outbox"] : [])).map { Table($0) as any DatabaseRegionConvertible }
        return stream(of: ValueObservation.tracking(regions: region, fetch: fetch).removeDuplicates())
    }

    /// The observation's values, each new one once.
    ///
    /// NB: GRDB sees the commits of this process only. Another process writing the same file (a
    /// command run beside a watching one, an app extension) is seen by the file: every second
    /// the database's and its WAL's size and time are read, and when they moved the observation
    /// starts again and reads the query afresh (a value equal to the last is not yielded again).
    /// A database file removed or replaced (the person signed out, or another signed in, in
    /// another process) ends the stream with `LocalDataRemoved`.
    private func stream<Reducer: ValueReducer>(of observation: ValueObservation<Reducer>)
        -> AsyncThrowingStream<Reducer.Value, any Error> where Reducer.Value: Sendable & Equatable {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Reducer.Value.self, throwing: (any Error).self)
        let query = ObservedQuery(observation: observation, reader: reader, continuation: continuation)
        query.start()
        continuation.onTermination = { _ in query.stop() }
        return stream
    }

    /// The sync state of each of `ids` (records of `collection`), for a list printed once.
    public func syncStates(_ collection: SyncCollection, ids: some Collection<String> & Sendable) throws -> [String: SyncState] {
        let mirror = mirrors[collection.name]
        return try reader.read { db in try SyncStates.of(collection.name, ids: ids, mirror: mirror, db: db) }
    }
}

/// This device's local data was removed while it was watched: the person signed out, or someone
/// else signed in, in another process.
public struct LocalDataRemoved: Error, CustomStringConvertible {
    public var description: String { "this device's data was removed (signed out elsewhere on this device): nothing more to show" }
}

/// One live query's observation, started again when another process commits (`LocalStore.stream`).
/// Everything runs on its queue.
private final class ObservedQuery<Reducer: ValueReducer>: @unchecked Sendable where Reducer.Value: Sendable & Equatable {
    private let observation: ValueObservation<Reducer>
    private let reader: any DatabaseReader
    private let continuation: AsyncThrowingStream<Reducer.Value, any Error>.Continuation
    private let file: DatabaseFile?
    private let queue = DispatchQueue(label: "eventual.live-query")
    private var cancellable: AnyDatabaseCancellable?
    private var timer: (any DispatchSourceTimer)?
    private var seen: DatabaseFile.Signature?
    private var last: Reducer.Value?
    private var ended = false

    init(observation: ValueObservation<Reducer>, reader: any DatabaseReader,
         continuation: AsyncThrowingStream<Reducer.Value, any Error>.Continuation) {
        self.observation = observation
        self.reader = reader
        self.continuation = continuation
        self.file = DatabaseFile(path: reader.path)
    }

    func start() {
        queue.async { [self] in
            seen = file?.signature()
            observe()
            guard file != nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + 1, repeating: 1, leeway: .milliseconds(100))
            timer.setEventHandler { [weak self] in self?.checkFile() }
            timer.resume()
            self.timer = timer
        }
    }

    func stop() {
        queue.async { [self] in end(throwing: nil) }
    }

    private func observe() {
        cancellable = observation.start(in: reader, scheduling: .async(onQueue: queue)) { [weak self] error in
            self?.end(throwing: error)
        } onChange: { [weak self] value in
            guard let self, !ended, value != last else { return }
            last = value
            continuation.yield(value)
        }
    }

    private func checkFile() {
        guard !ended, let file else { return }
        guard let now = file.signature(), now.identity == seen?.identity else { return end(throwing: LocalDataRemoved()) }
        guard now != seen else { return }
        seen = now
        cancellable?.cancel()
        observe()
    }

    private func end(throwing error: (any Error)?) {
        guard !ended else { return }
        ended = true
        timer?.cancel()
        timer = nil
        cancellable?.cancel()
        cancellable = nil
        continuation.finish(throwing: error)
    }
}

/// A database file and its WAL as the file system tells them: what moves when any process commits.
struct DatabaseFile: Sendable {
    let path: String

    /// nil for a database in memory.
    init?(path: String) {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file::memory:") else { return nil }
        self.path = path
    }

    struct Signature: Equatable {
        /// Which file it is: another at the same path is another database.
        var identity: UInt64
        var moved: [Double]
    }

    /// nil when the database file is gone.
    func signature() -> Signature? {
        let files = FileManager.default
        guard let database = try? files.attributesOfItem(atPath: path),
              let identity = (database[.systemFileNumber] as? NSNumber)?.uint64Value else { return nil }
        var moved = Self.moved(database)
        moved += (try? files.attributesOfItem(atPath: path + "-wal")).map(Self.moved) ?? [-1, -1]
        return Signature(identity: identity, moved: moved)
    }

    private static func moved(_ attributes: [FileAttributeKey: Any]) -> [Double] {
        [(attributes[.size] as? NSNumber)?.doubleValue ?? -1, (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? -1]
    }
}
