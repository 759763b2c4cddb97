import Crypto
import EventualAPI
import EventualStorage
import Foundation
import SQLKit

/// A recycling point as stored (without its visit count, which changes on its own).
struct RecyclingPointRecord: Sendable, Equatable {
    enum Kind: String, Sendable { case centre, container }

    let id: String
    let name: String?
    let latitude: Double
    let longitude: Double
    let kind: Kind
    /// Sorted, without repeats.
    let materials: [PointMaterial]
    let openingHours: String?
    let `operator`: String?
    let description: String?

    var position: GeoPosition { GeoPosition(latitude: latitude, longitude: longitude) }

    /// The columns read back for the in-memory index and the whole set.
    static let columns = ["id", "name", "latitude", "longitude", "kind", "materials", "opening_hours", "operator", "description"]

    /// A digest of every stored field: equal for an unchanged point, different for a changed one.
    var contentHash: String {
        // NB: fields joined with a separator no field may contain (text fields refuse control characters).
        let fields = [id, name ?? "\u{1}", String(latitude), String(longitude), kind.rawValue,
                      materials.map(\.rawValue).joined(separator: ","), openingHours ?? "\u{1}", `operator` ?? "\u{1}",
                      description ?? "\u{1}"]
        return Hex.encode(SHA256.hash(data: Data(fields.joined(separator: "\u{0}").utf8)))
    }

    var materialsColumn: String { materials.map(\.rawValue).joined(separator: ",") }

    init(id: String, name: String?, latitude: Double, longitude: Double, kind: Kind, materials: [PointMaterial],
         openingHours: String?, operator: String?, description: String?) {
        self.id = id
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.kind = kind
        self.materials = Array(Set(materials)).sorted()
        self.openingHours = openingHours
        self.operator = `operator`
        self.description = description
    }

    init(row: any SQLRow) throws {
        let kind = try row.decode(column: "kind", as: String.self)
        guard let parsedKind = Kind(rawValue: kind) else { throw StorageError.corrupt("a recycling point of kind '\(kind)'") }
        self.init(
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String?.self),
            latitude: try row.decode(column: "latitude", as: Double.self),
            longitude: try row.decode(column: "longitude", as: Double.self),
            kind: parsedKind,
            materials: Self.materials(parsing: try row.decode(column: "materials", as: String.self)),
            openingHours: try row.decode(column: "opening_hours", as: String?.self),
            operator: try row.decode(column: "operator", as: String?.self),
            description: try row.decode(column: "description", as: String?.self)
        )
    }

    static func materials(parsing column: String) -> [PointMaterial] {
        column.split(separator: ",").compactMap { PointMaterial(rawValue: String($0)) }
    }

    /// The point as the contract describes it.
    func answer(visits: Int64, distance: Double? = nil) -> Components.Schemas.RecyclingPoint {
        Components.Schemas.RecyclingPoint(
            id: id, name: name, latitude: latitude, longitude: longitude,
            kind: kind == .centre ? .centre : .container,
            materials: materials.compactMap { Components.Schemas.RecyclingMaterial(rawValue: $0.rawValue) },
            openingHours: openingHours, _operator: `operator`, description: description, visits: visits,
            distanceMeters: distance
        )
    }
}
