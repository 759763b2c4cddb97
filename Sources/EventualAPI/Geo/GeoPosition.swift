import Foundation

/// A place on Earth in WGS 84 degrees, as GPS and OpenStreetMap give it: the one position of the
/// server, the engine, the apps and their commands.
public struct GeoPosition: Sendable, Hashable, Codable {
    public let latitude: Double
    public let longitude: Double

    /// Mean Earth radius in metres (IUGG), the usual radius for great-circle distances.
    static let earthRadius = 6_371_008.8

    /// A position as given; `isValid` says whether it is one on Earth.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Parses "LAT,LON" (decimal degrees, spaces allowed around it and its numbers); nil when it
    /// is not a position on Earth.
    public init?(parsing text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2,
              let latitude = Double(parts[0].trimmingCharacters(in: .whitespaces)),
              let longitude = Double(parts[1].trimmingCharacters(in: .whitespaces)) else { return nil }
        self.init(latitude: latitude, longitude: longitude)
        guard isValid else { return nil }
    }

    /// Parses "LAT,LON" as `init?(parsing:)` does, throwing the caller's error, made from the
    /// trimmed text, when it is not a position on Earth.
    public init<Failure: Error>(parsing text: String, orThrow invalid: (String) -> Failure) throws(Failure) {
        // NB: a command line hands a negative pair over with a leading space (NegativeCoordinates).
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let position = GeoPosition(parsing: trimmed) else { throw invalid(trimmed) }
        self = position
    }

    /// Latitude within ±90 and longitude within ±180, both finite.
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
    }

    /// The great-circle distance in metres (haversine).
    public func distance(to other: GeoPosition) -> Double {
        let φ1 = latitude * .pi / 180, φ2 = other.latitude * .pi / 180
        let Δφ = φ2 - φ1
        let Δλ = (other.longitude - longitude) * .pi / 180
        let a = sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)
        return 2 * Self.earthRadius * asin(min(1, a.squareRoot()))
    }

    /// This position rounded to about 100 m (3 decimals of latitude), for anything that must not
    /// carry a person's exact whereabouts.
    public var roundedTo100Metres: GeoPosition {
        GeoPosition(latitude: (latitude * 1000).rounded() / 1000, longitude: (longitude * 1000).rounded() / 1000)
    }

    public var description: String { "\(latitude),\(longitude)" }
}
