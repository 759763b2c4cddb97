import EventualAPI
import EventualKit
import Foundation
import GRDB

/// The recycling points on this device: loaded once from the server (scenario 5 of the sprint
/// page: the first use needs the network), then read offline and revalidated with their ETag
/// whenever the server can be reached.
public struct PointCatalogue: Sendable {
    let store: LocalStore
    let client: Client
    static let name = "points"

    /// Asks the server for the points if they changed since the saved copy (304 otherwise) and
    /// replaces the saved copy. Returns false when nothing had changed.
    @discardableResult
    func refresh() async throws -> Bool {
        let etag = try meta()?.etag
        let answer: Operations.GetRecyclingPoints.Output
        do {
            answer = try await client.getRecyclingPoints(query: .init(), headers: .init(ifNoneMatch: etag))
        } catch {
            throw RemoteFailure.from(error)
        }
        let now = UnixMillis.now()
        switch answer {
        case .ok(let ok):
            let points = try ok.body.json.points.map(RecyclingPoint.init)
            try await store.write { tx in
                try tx.db.execute(sql: "DELETE FROM recycling_points")
                let insert = try tx.db.cachedStatement(sql: """
                    INSERT INTO recycling_points (id, name, latitude, longitude, kind, materials, opening_hours, operator, description, visits)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                for point in points {
                    try insert.execute(arguments: [point.id, point.name, point.position.latitude, point.position.longitude, point.kind,
                                                   point.materials.map(\.rawValue).joined(separator: ","), point.openingHours,
                                                   point.operatorName, point.description, point.visits])
                }
                try Self.saveMeta(name: Self.name, etag: ok.headers.eTag, version: nil, fetchedAt: now, tx.db)
            }
            return true
        case .notModified:
            try await store.write { tx in
                try tx.db.execute(sql: "UPDATE catalogues SET fetched_at = ? WHERE name = ?", arguments: [now, Self.name])
            }
            return false
        case .badRequest(let answer): throw RemoteFailure.status(400, message: try answer.body.json.message)
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Loading the recycling points")
        }
    }

    /// Whether the device has a copy, and when it was last confirmed.
    func meta() throws -> CatalogueMeta? {
        try store.reader.read { db in try Self.meta(name: Self.name, db) }
    }

    /// Every saved point, in the order the server sent them.
    func all() throws -> [RecyclingPoint] {
        try store.reader.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM recycling_points ORDER BY rowid").map(Self.point)
        }
    }

    func point(id: String) throws -> RecyclingPoint? {
        try store.reader.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM recycling_points WHERE id = ?", arguments: [id]).map(Self.point)
        }
    }

    /// Counts a visit here at once, so that the list shows it before the server hears of it.
    static func countVisit(pointID: String, _ db: Database) throws {
        try db.execute(sql: "UPDATE recycling_points SET visits = visits + 1 WHERE id = ?", arguments: [pointID])
    }

    private static func point(_ row: Row) -> RecyclingPoint {
        let materials: String = row["materials"]
        return RecyclingPoint(
            id: row["id"], name: row["name"],
            position: GeoPosition(latitude: row["latitude"], longitude: row["longitude"]),
            kind: row["kind"], materials: materials.split(separator: ",").compactMap { PointMaterial(rawValue: String($0)) },
            openingHours: row["opening_hours"], operatorName: row["operator"], description: row["description"], visits: row["visits"]
        )
    }

    static func meta(name: String, _ db: Database) throws -> CatalogueMeta? {
        try Row.fetchOne(db, sql: "SELECT etag, version, fetched_at FROM catalogues WHERE name = ?", arguments: [name])
            .map { CatalogueMeta(etag: $0["etag"], version: $0["version"], fetchedAt: $0["fetched_at"]) }
    }

    static func saveMeta(name: String, etag: String?, version: Int64?, fetchedAt: Int64, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO catalogues (name, etag, version, fetched_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (name) DO UPDATE SET etag = excluded.etag, version = excluded.version, fetched_at = excluded.fetched_at
            """, arguments: [name, etag, version, fetchedAt])
    }
}

/// When a saved catalogue was fetched, and what to send to ask only for what changed.
struct CatalogueMeta: Sendable {
    let etag: String?
    let version: Int64?
    let fetchedAt: Int64
}

/// The nearest points to a position, from the saved copy: the library's offline search.
public struct PointIndex: Sendable {
    private let search: NearestSearch<RecyclingPoint>
    private let points: [RecyclingPoint]

    public init(_ points: [RecyclingPoint]) {
        self.points = points
        search = NearestSearch(points) { $0.position }
    }

    public var count: Int { points.count }

    /// Up to `limit` points nearest to `origin` that accept `material` (any, without), nearest first.
    public func nearest(to origin: GeoPosition, limit: Int, material: PointMaterial? = nil) -> [NearbyPoint] {
        search.nearest(to: origin, limit: limit) { point in material.map(point.materials.contains) ?? true }
            .map { NearbyPoint(point: $0.place, distanceMeters: $0.meters) }
    }

    /// The first `limit` points (no position known), optionally only those that accept `material`.
    public func first(_ limit: Int, material: PointMaterial? = nil) -> [NearbyPoint] {
        points.lazy.filter { point in material.map(point.materials.contains) ?? true }.prefix(limit)
            .map { NearbyPoint(point: $0, distanceMeters: nil) }
    }
}
