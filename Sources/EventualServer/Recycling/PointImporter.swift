import EventualAPI
import EventualStorage
import Foundation
import SQLKit

/// Loads recycling points from an OpenStreetMap GeoJSON FeatureCollection (an Overpass export of
/// `amenity=recycling`), idempotently: a point is keyed by its OSM id, importing the same file
/// twice changes nothing, and a point whose tags or position changed is updated in place.
/// Points absent from a file are kept: files are regional, and one database holds several.
public struct PointImporter: Sendable {
    public typealias Summary = ProductImporter.Summary

    static let rowsPerTransaction = 500
    static let maxIDLength = 128
    static let maxNameLength = 200
    static let maxDescriptionLength = 2000

    let database: Database

    public init(database: Database) {
        self.database = database
    }

    /// Imports the GeoJSON file at `url`.
    public func importGeoJSON(at url: URL) async throws -> Summary {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw RecyclingImportError.unreadable(path: url.path, reason: (error as NSError).localizedFailureReason ?? "cannot be read")
        }
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw RecyclingImportError.notGeoJSON(path: url.path, reason: "it is not JSON")
        }
        guard let collection = root as? [String: Any], collection["type"] as? String == "FeatureCollection",
              let features = collection["features"] as? [Any] else {
            throw RecyclingImportError.notGeoJSON(path: url.path, reason: "it is not a FeatureCollection with a 'features' array")
        }
        var summary = Summary()
        var points: [String: RecyclingPointRecord] = [:]
        var order: [String] = []
        for feature in features {
            guard let point = Self.point(from: feature) else {
                summary.skipped += 1
                continue
            }
            // NB: an id repeated in the file keeps its last feature, so that a second import finds it unchanged.
            if points.updateValue(point, forKey: point.id) == nil {
                order.append(point.id)
            } else {
                summary.skipped += 1
            }
        }
        for start in stride(from: 0, to: order.count, by: Self.rowsPerTransaction) {
            let batch = order[start..<min(start + Self.rowsPerTransaction, order.count)].map { points[$0]! }
            let counts = try await database.transaction { sql in try await Self.apply(batch, on: sql) }
            summary.imported += counts.imported
            summary.updated += counts.updated
            summary.unchanged += counts.unchanged
        }
        return summary
    }

    private static func apply(_ batch: [RecyclingPointRecord], on sql: any SQLDatabase) async throws -> Summary {
        var counts = Summary()
        var stored: [String: String] = [:]
        for row in try await sql.select().columns("id", "content_hash").from("recycling_points")
            .where("id", .in, batch.map(\.id)).all() {
            stored[try row.decode(column: "id", as: String.self)] = try row.decode(column: "content_hash", as: String.self)
        }
        let now = UnixMillis.now()
        var inserts: [RecyclingPointRecord] = []
        for point in batch {
            let hash = point.contentHash
            switch stored[point.id] {
            case nil:
                inserts.append(point)
            case hash:
                counts.unchanged += 1
            default:
                try await sql.update("recycling_points")
                    .set("name", to: point.name).set("latitude", to: point.latitude).set("longitude", to: point.longitude)
                    .set("kind", to: point.kind.rawValue).set("materials", to: point.materialsColumn)
                    .set("opening_hours", to: point.openingHours).set("operator", to: point.operator)
                    .set("description", to: point.description).set("content_hash", to: hash).set("updated_at", to: now)
                    .where("id", .equal, point.id).run()
                counts.updated += 1
            }
        }
        if !inserts.isEmpty {
            let insert = sql.insert(into: "recycling_points")
                .columns("id", "name", "latitude", "longitude", "kind", "materials", "opening_hours", "operator", "description",
                         "visits", "content_hash", "updated_at")
            for point in inserts {
                insert.values(SQLBind(point.id), SQLBind(point.name), SQLBind(point.latitude), SQLBind(point.longitude),
                              SQLBind(point.kind.rawValue), SQLBind(point.materialsColumn), SQLBind(point.openingHours),
                              SQLBind(point.operator), SQLBind(point.description), SQLBind(Int64(0)), SQLBind(point.contentHash),
                              SQLBind(now))
            }
            try await insert.run()
            counts.imported = inserts.count
        }
        if counts.imported + counts.updated > 0 {
            try await RecyclingVersions.bump(.points, on: sql)
        }
        return counts
    }

    /// The point a feature describes, or nil when it is not a usable `amenity=recycling` object.
    static func point(from feature: Any) -> RecyclingPointRecord? {
        guard let feature = feature as? [String: Any],
              let properties = feature["properties"] as? [String: Any],
              properties["amenity"] as? String == "recycling",
              let geometry = feature["geometry"] as? [String: Any],
              let position = position(of: geometry), position.isValid
        else { return nil }
        let rawID = (feature["id"] as? String) ?? (properties["@id"] as? String) ?? ""
        let id = rawID.trimmingCharacters(in: .whitespaces)
        guard !id.isEmpty, id.unicodeScalars.count <= maxIDLength, TextRules.problem(in: id, .singleLine) == nil else { return nil }
        var materials: [PointMaterial] = []
        for (key, value) in properties where key.hasPrefix("recycling:") {
            guard (value as? String)?.lowercased() == "yes",
                  let material = PointMaterial(osmKey: String(key.dropFirst("recycling:".count))) else { continue }
            materials.append(material)
        }
        let kind: RecyclingPointRecord.Kind = (properties["recycling_type"] as? String) == "centre" ? .centre : .container
        return RecyclingPointRecord(
            id: id, name: text(properties["name"], maxLength: maxNameLength),
            latitude: position.latitude, longitude: position.longitude, kind: kind, materials: materials,
            openingHours: text(properties["opening_hours"], maxLength: maxNameLength),
            operator: text(properties["operator"], maxLength: maxNameLength),
            description: text(properties["description"], maxLength: maxDescriptionLength, .multiLine)
        )
    }

    /// A tag's text, trimmed; nil when absent, empty, too long or holding control characters
    /// (the tag is dropped, the point kept).
    private static func text(_ value: Any?, maxLength: Int, _ allowance: TextRules.Allowance = .singleLine) -> String? {
        guard let value = value as? String else { return nil }
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.unicodeScalars.count <= maxLength, TextRules.problem(in: trimmed, allowance) == nil else {
            return nil
        }
        return trimmed
    }

    /// A Point's position; a Polygon's or MultiPolygon's outer rings reduced to their centroid.
    static func position(of geometry: [String: Any]) -> GeoPosition? {
        switch geometry["type"] as? String {
        case "Point":
            return coordinate(geometry["coordinates"])
        case "Polygon":
            guard let rings = geometry["coordinates"] as? [Any], let outer = rings.first else { return nil }
            return centroid(of: [outer])
        case "MultiPolygon":
            guard let polygons = geometry["coordinates"] as? [Any] else { return nil }
            return centroid(of: polygons.compactMap { ($0 as? [Any])?.first })
        default:
            return nil
        }
    }

    /// [lon, lat] (GeoJSON's order) as a position.
    private static func coordinate(_ value: Any?) -> GeoPosition? {
        guard let pair = value as? [Any], pair.count >= 2,
              let longitude = (pair[0] as? NSNumber)?.doubleValue, let latitude = (pair[1] as? NSNumber)?.doubleValue
        else { return nil }
        return GeoPosition(latitude: latitude, longitude: longitude)
    }

    /// The area-weighted centroid of rings (planar in degrees: fine for a building or a yard);
    /// the mean of their vertices when they enclose no area.
    static func centroid(of rings: [Any]) -> GeoPosition? {
        var weight = 0.0, sumX = 0.0, sumY = 0.0
        var vertexSum = (x: 0.0, y: 0.0, count: 0)
        for ring in rings {
            guard let coordinates = ring as? [Any] else { return nil }
            let points = coordinates.compactMap(coordinate)
            guard points.count == coordinates.count, !points.isEmpty else { return nil }
            var area = 0.0, x = 0.0, y = 0.0
            for index in points.indices {
                let a = points[index], b = points[(index + 1) % points.count]
                vertexSum.x += a.longitude
                vertexSum.y += a.latitude
                vertexSum.count += 1
                let cross = a.longitude * b.latitude - b.longitude * a.latitude
                area += cross
                x += (a.longitude + b.longitude) * cross
                y += (a.latitude + b.latitude) * cross
            }
            // NB: rings may wind either way; each one weighs by its own absolute area.
            guard abs(area) > 1e-18 else { continue }
            weight += abs(area) / 2
            sumX += abs(area) / 2 * x / (3 * area)
            sumY += abs(area) / 2 * y / (3 * area)
        }
        guard vertexSum.count > 0 else { return nil }
        guard weight > 0 else {
            return GeoPosition(latitude: vertexSum.y / Double(vertexSum.count), longitude: vertexSum.x / Double(vertexSum.count))
        }
        return GeoPosition(latitude: sumY / weight, longitude: sumX / weight)
    }
}
