import Foundation

/// A place where the user bought things.
public struct Place: Sendable, Equatable, Codable {
    public let name: String
    /// Items bought there (in the pantry or not).
    public let count: Int
    /// The last position recorded for it, if any.
    public let latitude: Double?
    public let longitude: Double?

    /// Groups items by place, most used first.
    public static func summarize(_ items: [PantryItem]) -> [Place] {
        var byName: [String: (count: Int, latest: PantryItem)] = [:]
        for item in items {
            guard let name = item.place?.trimmingCharacters(in: .whitespaces), !name.isEmpty else { continue }
            var entry = byName[name] ?? (0, item)
            entry.count += 1
            if item.latitude != nil, entry.latest.latitude == nil || item.boughtAt > entry.latest.boughtAt { entry.latest = item }
            byName[name] = entry
        }
        return byName.map { name, entry in
            Place(name: name, count: entry.count, latitude: entry.latest.latitude, longitude: entry.latest.longitude)
        }.sorted { ($0.count, $1.name) > ($1.count, $0.name) }
    }

    /// A GeoJSON FeatureCollection of the places with a position: a Point per place, with
    /// `name` and `count` properties. GeoJSON puts longitude first.
    public static func geoJSON(_ places: [Place]) throws -> Data {
        struct Geometry: Encodable {
            let type = "Point"
            let coordinates: [Double]
        }
        struct Properties: Encodable {
            let name: String
            let count: Int
        }
        struct Feature: Encodable {
            let type = "Feature"
            let geometry: Geometry
            let properties: Properties
        }
        struct Collection: Encodable {
            let type = "FeatureCollection"
            let features: [Feature]
        }
        let features = places.compactMap { place -> Feature? in
            guard let latitude = place.latitude, let longitude = place.longitude else { return nil }
            return Feature(geometry: Geometry(coordinates: [longitude, latitude]), properties: Properties(name: place.name, count: place.count))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(Collection(features: features))
    }
}
