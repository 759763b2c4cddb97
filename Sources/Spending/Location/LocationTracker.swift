import EventualAPI
import EventualKit
import Foundation
import GRDB

/// What became of one observed position.
public struct LocationUpdate: Sendable, Equatable {
    /// Kept as the last position on the device (at most once a minute).
    public let saved: Bool
    /// A new request to the server was queued (at most once every 5 minutes).
    public let queued: Bool
    /// An unsent request was given this newer position instead (still one outbox entry).
    public let coalesced: Bool
}

/// The person's last position (seed F1): kept on the device at most once a minute, pushed to
/// the server at most once every 5 minutes as one coalesced outbox entry, so only the newest
/// position is ever sent and an offline phone does not pile requests up.
public struct LocationTracker: Sendable {
    public static let saveSpacing: Int64 = 60 * 1000
    public static let pushSpacing: Int64 = 5 * 60 * 1000
    static let coalescingKey = "spending.location"

    let store: LocalStore
    /// Unix milliseconds now (a test drives it).
    let clock: @Sendable () -> Int64

    public init(store: LocalStore, clock: @escaping @Sendable () -> Int64) {
        self.store = store
        self.clock = clock
    }

    /// A position from the sensor. `force` (a person typed it) keeps it even within the minute.
    @discardableResult
    public func observe(_ position: GeoPosition, force: Bool = false) async throws -> LocationUpdate {
        guard position.isValid else { throw SpendingError.invalidCoordinates(position.description) }
        let now = clock()
        return try await store.write { tx in
            let row = try Row.fetchOne(tx.db, sql: "SELECT savedAt, queuedAt FROM spending_position WHERE id = 1")
            let savedAt: Int64? = row?["savedAt"], queuedAt: Int64? = row?["queuedAt"]
            if !force, let savedAt, now - savedAt < Self.saveSpacing, now >= savedAt {
                return LocationUpdate(saved: false, queued: false, coalesced: false)
            }
            try tx.db.execute(sql: """
                INSERT INTO spending_position (id, latitude, longitude, savedAt, queuedAt) VALUES (1, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET latitude = excluded.latitude, longitude = excluded.longitude, savedAt = excluded.savedAt
                """, arguments: [position.latitude, position.longitude, now, queuedAt])
            return try Self.push(position, at: now, queuedAt: queuedAt, tx)
        }
    }

    /// Queues the saved position if it was never sent and 5 minutes have passed (a start of the app).
    @discardableResult
    public func catchUp() async throws -> LocationUpdate {
        let now = clock()
        return try await store.write { tx in
            guard let row = try Row.fetchOne(tx.db, sql: "SELECT latitude, longitude, savedAt, queuedAt FROM spending_position WHERE id = 1") else {
                return LocationUpdate(saved: false, queued: false, coalesced: false)
            }
            let queuedAt: Int64? = row["queuedAt"], savedAt: Int64 = row["savedAt"]
            guard queuedAt.map({ savedAt > $0 }) ?? true else { return LocationUpdate(saved: false, queued: false, coalesced: false) }
            let position = GeoPosition(latitude: row["latitude"], longitude: row["longitude"])
            return try Self.push(position, at: savedAt, queuedAt: queuedAt, now: now, tx)
        }
    }

    /// The last position kept, and when (Unix ms).
    public func last() throws -> (position: GeoPosition, at: Int64)? {
        try store.reader.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT latitude, longitude, savedAt FROM spending_position WHERE id = 1") else { return nil }
            return (GeoPosition(latitude: row["latitude"], longitude: row["longitude"]), row["savedAt"])
        }
    }

    private static func push(_ position: GeoPosition, at: Int64, queuedAt: Int64?, now: Int64? = nil, _ tx: LocalTransaction) throws -> LocationUpdate {
        let now = now ?? at
        let call = LocationCall(latitude: position.latitude, longitude: position.longitude, at: at)
        if queuedAt.map({ now - $0 >= pushSpacing || now < $0 }) ?? true {
            try tx.enqueueCall(SpendingCalls.location, payload: call, coalescingKey: coalescingKey)
            try tx.db.execute(sql: "UPDATE spending_position SET queuedAt = ? WHERE id = 1", arguments: [now])
            return LocationUpdate(saved: true, queued: true, coalesced: false)
        }
        // NB: within the 5 minutes, a request still waiting (offline) carries the newest position
        // instead of its older one: replacing it adds no request.
        if try tx.hasPendingCall(coalescingKey: coalescingKey) {
            try tx.enqueueCall(SpendingCalls.location, payload: call, coalescingKey: coalescingKey)
            return LocationUpdate(saved: true, queued: false, coalesced: true)
        }
        return LocationUpdate(saved: true, queued: false, coalesced: false)
    }
}
