import EventualAPI
import Foundation

/// A place to recycle ("GreenPoint"): a recycling centre or a container, from OpenStreetMap.
public struct RecyclingPoint: Sendable, Equatable, Codable {
    public let id: String
    public let name: String?
    public let position: GeoPosition
    /// "centre" or "container".
    public let kind: String
    public let materials: [PointMaterial]
    public let openingHours: String?
    public let operatorName: String?
    public let description: String?
    public let visits: Int64

    /// A name for people: the point's own, else its kind and what it takes.
    public var title: String {
        if let name, !name.isEmpty { return name }
        let what = materials.prefix(3).map(\.rawValue).joined(separator: ", ")
        return kind == "centre" ? "Recycling centre" : "Container" + (what.isEmpty ? "" : " (\(what))")
    }

    init(_ point: Components.Schemas.RecyclingPoint) {
        id = point.id
        name = point.name
        position = GeoPosition(latitude: point.latitude, longitude: point.longitude)
        kind = point.kind.rawValue
        materials = point.materials.compactMap { PointMaterial(rawValue: $0.rawValue) }
        openingHours = point.openingHours
        operatorName = point._operator
        description = point.description
        visits = point.visits
    }

    init(id: String, name: String?, position: GeoPosition, kind: String, materials: [PointMaterial],
         openingHours: String?, operatorName: String?, description: String?, visits: Int64) {
        self.id = id
        self.name = name
        self.position = position
        self.kind = kind
        self.materials = materials
        self.openingHours = openingHours
        self.operatorName = operatorName
        self.description = description
        self.visits = visits
    }
}

/// A point with its distance from where the person is.
public struct NearbyPoint: Sendable, Equatable {
    public let point: RecyclingPoint
    /// Metres, when a position was given.
    public let distanceMeters: Double?

    public init(point: RecyclingPoint, distanceMeters: Double?) {
        self.point = point
        self.distanceMeters = distanceMeters
    }
}

/// The saved copy of the points, and how old it is.
public struct PointsAnswer: Sendable, Equatable {
    public let points: [NearbyPoint]
    /// How many saved points matched (the material, if one was asked for): more than `points`
    /// when the list was cut at its limit.
    public let total: Int
    /// Unix milliseconds when the saved copy was last confirmed by the server.
    public let fetchedAt: Int64
    /// False when the server could not be asked now: the copy may be out of date.
    public let fresh: Bool
}
