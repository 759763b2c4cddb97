import EventualAPI
import Dispatch
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

    private func stream<Reducer: ValueReducer>(of observation: ValueObservation<Reducer>)
        -> AsyncThrowingStream<Reducer.Value, any Error> where Reducer.Value: Sendable {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Reducer.Value.self, throwing: (any Error).self)
        let queue = DispatchQueue(label: "eventual.live-query")
        let cancellable = observation.start(in: reader, scheduling: .async(onQueue: queue)) { error in
            continuation.finish(throwing: error)
        } onChange: { value in
            continuation.yield(value)
        }
        continuation.onTermination = { _ in cancellable.cancel() }
        return stream
    }

    /// The sync state of each of `ids` (records of `collection`), for a list printed once.
    public func syncStates(_ collection: SyncCollection, ids: some Collection<String> & Sendable) throws -> [String: SyncState] {
        let mirror = mirrors[collection.name]
        return try reader.read { db in try SyncStates.of(collection.name, ids: ids, mirror: mirror, db: db) }
    }
}
