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
    /// NB: GRDB sees the commits of this process only. Another process's commit to the same file
    /// (a command run beside a watching one, an app extension; `otherProcessEvents()`) starts
    /// the observation again, which reads the query afresh (a value equal to the last is not
    /// yielded again). A database file removed or replaced (the person signed out, or another
    /// signed in, in another process) ends the stream with `LocalDataRemoved`.
    private func stream<Reducer: ValueReducer>(of observation: ValueObservation<Reducer>)
        -> AsyncThrowingStream<Reducer.Value, any Error> where Reducer.Value: Sendable & Equatable {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Reducer.Value.self, throwing: (any Error).self)
        let query = ObservedQuery(observation: observation, store: self, continuation: continuation)
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
    private let store: LocalStore
    private let continuation: AsyncThrowingStream<Reducer.Value, any Error>.Continuation
    private let queue = DispatchQueue(label: "eventual.live-query")
    private var cancellable: AnyDatabaseCancellable?
    private var otherProcesses: Task<Void, Never>?
    private var last: Reducer.Value?
    private var ended = false

    init(observation: ValueObservation<Reducer>, store: LocalStore,
         continuation: AsyncThrowingStream<Reducer.Value, any Error>.Continuation) {
        self.observation = observation
        self.store = store
        self.continuation = continuation
    }

    func start() {
        let events = Task { [store, queue] in
            // NB: listening first, then reading the first value: a commit in between is heard.
            let events = await store.otherProcessEvents()
            queue.async { [weak self] in self?.observe() }
            for await event in events {
                queue.async { [weak self] in self?.otherProcess(event) }
            }
        }
        queue.async { [self] in
            if ended { events.cancel() } else { otherProcesses = events }
        }
    }

    func stop() {
        queue.async { [self] in end(throwing: nil) }
    }

    private func observe() {
        guard !ended else { return }
        cancellable = observation.start(in: store.reader, scheduling: .async(onQueue: queue)) { [weak self] error in
            self?.end(throwing: error)
        } onChange: { [weak self] value in
            guard let self, !ended, value != last else { return }
            last = value
            continuation.yield(value)
        }
    }

    private func otherProcess(_ event: OtherProcessEvent) {
        guard !ended else { return }
        switch event {
        case .committed:
            cancellable?.cancel()
            observe()
        case .removed:
            end(throwing: LocalDataRemoved())
        }
    }

    private func end(throwing error: (any Error)?) {
        guard !ended else { return }
        ended = true
        otherProcesses?.cancel()
        otherProcesses = nil
        cancellable?.cancel()
        cancellable = nil
        continuation.finish(throwing: error)
    }
}
