import EventualAPI
import EventualStorage
import Foundation
import SQLKit
import Synchronization

/// The recycling points: an in-memory nearest-point index over the stored set, reloaded only
/// when an import changed a point (the `points` version), and visit counts read fresh from the
/// database on every answer (several servers may share one database).
final class RecyclingPointStore: Sendable {
    /// The stored set at one content version, ready for nearest searches.
    struct Snapshot: Sendable {
        let version: Int64
        let points: [RecyclingPointRecord]
        let search: NearestSearch<Int>
        let byID: [String: Int]
        /// Bit `1 << material index` per accepted material, per point: a cheap filter in the search.
        let materialMasks: [UInt16]
    }

    let database: Database
    private let snapshot = Mutex<Snapshot?>(nil)
    /// Serialises reloads, so that a burst of requests after an import loads the set once.
    private let reloading = AsyncLock()

    private static let versionSQL = "SELECT version FROM recycling_versions WHERE name = ?"
    private static let visitsSQL = "SELECT visits FROM recycling_points WHERE id = ?"

    init(database: Database) {
        self.database = database
    }

    // MARK: Versions and visit counts (the only reads of a `near` answer)

    /// The `points` and `visits` versions.
    func versions() async throws -> (points: Int64, visits: Int64) {
        if let reader = database.fastReader {
            return try reader.read { connection in
                var points: Int64 = 0, visits: Int64 = 0
                try connection.query(Self.versionSQL, ["points"]) { points = $0.int64(0) }
                try connection.query(Self.versionSQL, ["visits"]) { visits = $0.int64(0) }
                return (points, visits)
            }
        }
        let all = try await database.withConnection { sql in try await RecyclingVersions.all(on: sql) }
        return (all[.points] ?? 0, all[.visits] ?? 0)
    }

    /// The visit counts of some points (a point no longer stored is absent).
    func visits(of ids: [String]) async throws -> [String: Int64] {
        guard !ids.isEmpty else { return [:] }
        if let reader = database.fastReader {
            return try reader.read { connection in
                var counts: [String: Int64] = [:]
                for id in ids {
                    try connection.query(Self.visitsSQL, [id]) { counts[id] = $0.int64(0) }
                }
                return counts
            }
        }
        return try await database.withConnection { sql in
            var counts: [String: Int64] = [:]
            for row in try await sql.select().columns("id", "visits").from("recycling_points").where("id", .in, ids).all() {
                counts[try row.decode(column: "id", as: String.self)] = try row.decode(column: "visits", as: Int64.self)
            }
            return counts
        }
    }

    /// Every point's visit count that is not zero.
    func allVisits() async throws -> [String: Int64] {
        try await database.withConnection { sql in
            var counts: [String: Int64] = [:]
            for row in try await sql.select().columns("id", "visits").from("recycling_points").where("visits", .greaterThan, 0).all() {
                counts[try row.decode(column: "id", as: String.self)] = try row.decode(column: "visits", as: Int64.self)
            }
            return counts
        }
    }

    // MARK: The index

    /// The index for content version `version`, loaded if the one held is older.
    func snapshot(atLeast version: Int64) async throws -> Snapshot {
        if let held = snapshot.withLock({ $0 }), held.version >= version { return held }
        return try await reloading.withLock {
            if let held = snapshot.withLock({ $0 }), held.version >= version { return held }
            let loaded = try await load()
            snapshot.withLock { $0 = loaded }
            return loaded
        }
    }

    private func load() async throws -> Snapshot {
        let (version, points) = try await database.withConnection { sql in
            // NB: the version is read before the rows: a point changed meanwhile makes the next
            // request find a newer version and load again, never the other way round.
            let version = try await RecyclingVersions.value(.points, on: sql)
            let rows = try await sql.select().columns(RecyclingPointRecord.columns.map { SQLColumn($0) }).from("recycling_points")
                .orderBy("id").all()
            return (version, try rows.map(RecyclingPointRecord.init(row:)))
        }
        let masks = points.map { point in point.materials.reduce(UInt16(0)) { $0 | Self.bit($1) } }
        var byID: [String: Int] = [:]
        byID.reserveCapacity(points.count)
        for (index, point) in points.enumerated() { byID[point.id] = index }
        return Snapshot(version: version, points: points, search: NearestSearch(Array(points.indices)) { points[$0].position },
                        byID: byID, materialMasks: masks)
    }

    static func bit(_ material: PointMaterial) -> UInt16 {
        1 << UInt16(PointMaterial.allCases.firstIndex(of: material)!)
    }

    /// Up to `limit` points nearest to `origin` (accepting `material`, if given), nearest first,
    /// with their distances and fresh visit counts.
    func nearest(to origin: GeoPosition, limit: Int, material: PointMaterial?) async throws
        -> [(point: RecyclingPointRecord, meters: Double, visits: Int64)] {
        let version = try await versions().points
        let snapshot = try await snapshot(atLeast: version)
        let found: [(place: Int, meters: Double)]
        if let material {
            let bit = Self.bit(material), masks = snapshot.materialMasks
            found = snapshot.search.nearest(to: origin, limit: limit) { masks[$0] & bit != 0 }
        } else {
            found = snapshot.search.nearest(to: origin, limit: limit)
        }
        let points = found.map { snapshot.points[$0.place] }
        let visits = try await visits(of: points.map(\.id))
        return zip(points, found).map { point, hit in (point, hit.meters, visits[point.id] ?? 0) }
    }

    /// A stored point, from the index (nil if it is not stored).
    func point(id: String) async throws -> RecyclingPointRecord? {
        let snapshot = try await snapshot(atLeast: try await versions().points)
        return snapshot.byID[id].map { snapshot.points[$0] }
    }
}
