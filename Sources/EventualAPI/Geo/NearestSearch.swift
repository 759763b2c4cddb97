import Foundation

/// The k nearest of many positions, fast enough to run on every keystroke of a map screen:
/// one pass ranks every candidate by a cheap planar distance (exact enough to order places
/// within a few hundred kilometres), then only the best few get the exact great-circle distance.
///
/// The server answers `?near=` with it and the apps search their saved copy with it, so both
/// give the same order.
public struct NearestSearch<Place: Sendable>: Sendable {
    private let places: [Place]
    private let latitudes: [Double]
    private let longitudes: [Double]

    public init(_ places: [Place], position: (Place) -> GeoPosition) {
        self.places = places
        latitudes = places.map { position($0).latitude }
        longitudes = places.map { position($0).longitude }
    }

    public var count: Int { places.count }

    /// Up to `limit` places nearest to `origin` that pass `include`, nearest first, each with its
    /// distance in metres; ties keep the order the places were given in.
    public func nearest(to origin: GeoPosition, limit: Int, where include: (Place) -> Bool = { _ in true }) -> [(place: Place, meters: Double)] {
        guard limit > 0, !places.isEmpty else { return [] }
        // NB: a few extra candidates absorb the planar approximation's error before the exact sort.
        let keep = min(places.count, limit + 8)
        let scale = cos(origin.latitude * .pi / 180)
        var best: [(index: Int, key: Double)] = []
        best.reserveCapacity(keep + 1)
        var worst = Double.infinity
        for index in places.indices {
            let dy = latitudes[index] - origin.latitude
            var dx = abs(longitudes[index] - origin.longitude)
            if dx > 180 { dx = 360 - dx }
            dx *= scale
            let key = dx * dx + dy * dy
            guard best.count < keep || key < worst else { continue }
            guard include(places[index]) else { continue }
            // Insertion into a short sorted array: cheaper than a heap for a few dozen entries.
            var slot = best.count
            while slot > 0, best[slot - 1].key > key { slot -= 1 }
            best.insert((index, key), at: slot)
            if best.count > keep { best.removeLast() }
            if best.count == keep { worst = best[keep - 1].key }
        }
        let exact = best.map { candidate in
            (index: candidate.index,
             meters: origin.distance(to: GeoPosition(latitude: latitudes[candidate.index], longitude: longitudes[candidate.index])))
        }
        .sorted { $0.meters != $1.meters ? $0.meters < $1.meters : $0.index < $1.index }
        return exact.prefix(limit).map { (place: places[$0.index], meters: $0.meters) }
    }
}
