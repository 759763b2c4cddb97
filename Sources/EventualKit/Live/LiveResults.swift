import GRDB
import Observation

/// A live query's rows for a screen, as an `@Observable` on the main actor: what a list reads,
/// and redraws from when it changes. It follows `LocalStore.observe`: the rows, each with its
/// sync state, after every committed transaction that changes them (this process's writes, a
/// pulled page, a change sent or refused, another process's commit); a write to other tables
/// changes nothing here. Each snapshot is set in one main-actor turn, so an observer hears one
/// change for it.
///
/// It watches while it lives: released (the screen went), or `stop()`ped, it stops watching.
///
/// ```swift
/// let items = LiveResults(RecordTable<PantryItem>(), in: device.store) { db in
///     try PantryItem.fetchAll(db, sql: "SELECT * FROM pantry_items ORDER BY name")
/// }
/// // SwiftUI: List(items.rows, id: \.row.id) { Text($0.row.name) }
/// ```
@MainActor
@Observable
public final class LiveResults<Row: Sendable & Equatable> {
    /// The rows of the last snapshot, each with its record's sync state; empty while loading.
    public private(set) var rows: [LiveRow<Row>] = []
    /// True until the first snapshot is in.
    public private(set) var isLoading = true
    /// What ended the query (`LocalDataRemoved` when the device's data was removed, or the
    /// query's own error); the rows stay as they were last.
    public private(set) var error: (any Error)?
    /// Unix milliseconds of the last round that pushed and pulled everything; nil before the first.
    public private(set) var lastSyncedAt: Int64?

    @ObservationIgnored private var watching: Task<Void, Never>?

    /// Follows `snapshots` (a `LocalStore.observe` stream) until released or stopped.
    public init(_ snapshots: AsyncThrowingStream<LiveSnapshot<Row>, any Error>) {
        watching = Task { [weak self] in
            do {
                for try await snapshot in snapshots {
                    guard let self else { return }
                    self.take(snapshot)
                }
            } catch is CancellationError {
                return
            } catch {
                self?.end(error)
            }
        }
    }

    /// Stops watching: the rows stay as they were last.
    public func stop() {
        watching?.cancel()
        watching = nil
    }

    isolated deinit {
        watching?.cancel()
    }

    private func take(_ snapshot: LiveSnapshot<Row>) {
        if rows != snapshot.rows { rows = snapshot.rows }
        if lastSyncedAt != snapshot.lastSyncedAt { lastSyncedAt = snapshot.lastSyncedAt }
        if isLoading { isLoading = false }
    }

    private func end(_ error: any Error) {
        self.error = error
        isLoading = false
    }
}

extension LiveResults where Row: SyncRecord {
    /// The records `fetch` reads of `table`, each with its sync state, following every change.
    public convenience init(_ table: RecordTable<Row>, in store: LocalStore, fetch: @escaping @Sendable (Database) throws -> [Row]) {
        self.init(store.observe(table.mirror, id: { $0.id }, fetch: fetch))
    }
}

/// A sync engine's status (`SyncStatus`: connectivity, what waits and what was refused, whether a
/// round runs, first sync's progress, the last error) as an `@Observable` on the main actor, for
/// a status line or a badge that redraws when it changes. It follows the engine while it lives.
@MainActor
@Observable
public final class LiveSyncStatus {
    /// The engine's status as last published.
    public private(set) var status = SyncStatus()

    @ObservationIgnored private var watching: Task<Void, Never>?

    /// Follows `engine`'s status until released or stopped.
    public init(_ engine: SyncEngine) {
        let updates = engine.status
        watching = Task { [weak self] in
            for await status in updates {
                guard let self else { return }
                if self.status != status { self.status = status }
            }
        }
    }

    /// Stops following the engine: the status stays as it was last.
    public func stop() {
        watching?.cancel()
        watching = nil
    }

    isolated deinit {
        watching?.cancel()
    }
}
