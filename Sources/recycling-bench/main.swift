import AsyncHTTPClient
import EventualAPI
import Foundation

// recycling-bench: seeds recycling points and measures nearest searches (scripts/bench-recycling.sh).
//
//   recycling-bench seed OUT.geojson COUNT FILE...   COUNT points jittered around the real points of FILEs
//   recycling-bench local FILE.geojson QUERIES        p95 of NearestSearch over FILE's points (the apps' code)
//   recycling-bench server URL FILE.geojson QUERIES   p95 of GET URL/v1/recycling/points?near= over HTTP
//
// Each measuring mode prints one line: "p50 X ms p95 Y ms max Z ms (N queries over M points)".

struct Generator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("recycling-bench: \(message)\n".utf8))
    exit(2)
}

/// The Point features of a GeoJSON file: (id, position, properties).
func features(in path: String) -> [(id: String, position: GeoPosition, properties: [String: Any])] {
    guard let data = FileManager.default.contents(atPath: path),
          let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
          let features = root["features"] as? [[String: Any]] else { fail("\(path) is not a GeoJSON FeatureCollection") }
    return features.compactMap { feature in
        guard let geometry = feature["geometry"] as? [String: Any], geometry["type"] as? String == "Point",
              let pair = geometry["coordinates"] as? [Double], pair.count >= 2 else { return nil }
        return ((feature["id"] as? String) ?? "", GeoPosition(latitude: pair[1], longitude: pair[0]), feature["properties"] as? [String: Any] ?? [:])
    }
}

func summary(_ durations: [Double], points: Int) -> (p95: Double, line: String) {
    let sorted = durations.sorted()
    func quantile(_ q: Double) -> Double { sorted[min(sorted.count - 1, Int((Double(sorted.count) * q).rounded(.up)) - 1)] }
    let p95 = quantile(0.95)
    return (p95, String(format: "p50 %.3f ms p95 %.3f ms max %.3f ms (%d queries over %d points)",
                        quantile(0.5), p95, sorted.last ?? 0, sorted.count, points))
}

/// Query positions: near a random stored point, up to ~2 km away, as a person on the map would be.
func origins(_ count: Int, around places: [GeoPosition], seed: UInt64) -> [GeoPosition] {
    var random = Generator(state: seed)
    return (0..<count).map { _ in
        let base = places[Int.random(in: 0..<places.count, using: &random)]
        return GeoPosition(latitude: base.latitude + Double.random(in: -0.02...0.02, using: &random),
                           longitude: base.longitude + Double.random(in: -0.03...0.03, using: &random))
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first else { fail("usage: recycling-bench seed|local|server ...") }
switch mode {
case "seed":
    guard arguments.count >= 4, let count = Int(arguments[2]), count > 0 else { fail("usage: recycling-bench seed OUT COUNT FILE...") }
    let real = arguments.dropFirst(3).flatMap(features)
    guard !real.isEmpty else { fail("no Point features in the input files") }
    var random = Generator(state: 42)
    var out: [[String: Any]] = []
    out.reserveCapacity(count)
    for index in 0..<count {
        let source = real[index % real.count]
        // Spread the copies over a city region around each real point (about ±5 km), so that the
        // density looks like a big city's containers rather than a stack at one spot.
        let latitude = source.position.latitude + Double.random(in: -0.045...0.045, using: &random)
        let longitude = source.position.longitude + Double.random(in: -0.065...0.065, using: &random)
        var properties = source.properties
        properties["@id"] = "node/bench\(index)"
        out.append(["type": "Feature", "id": "node/bench\(index)", "properties": properties,
                    "geometry": ["type": "Point", "coordinates": [longitude, latitude]]])
    }
    let collection: [String: Any] = ["type": "FeatureCollection", "features": out]
    guard let data = try? JSONSerialization.data(withJSONObject: collection),
          FileManager.default.createFile(atPath: arguments[1], contents: data) else { fail("cannot write \(arguments[1])") }
    print("seeded \(count) points")
case "local":
    guard arguments.count == 3, let queries = Int(arguments[2]), queries > 0 else { fail("usage: recycling-bench local FILE QUERIES") }
    let places = features(in: arguments[1])
    let search = NearestSearch(places.map(\.position)) { $0 }
    let targets = origins(queries, around: places.map(\.position), seed: 7)
    let clock = ContinuousClock()
    var durations: [Double] = []
    var checksum = 0.0
    for origin in targets {
        let start = clock.now
        let found = search.nearest(to: origin, limit: 20)
        durations.append(Double((clock.now - start).components.attoseconds) / 1e15 + Double((clock.now - start).components.seconds) * 1000)
        checksum += found.first?.meters ?? 0
    }
    precondition(checksum > 0)
    print(summary(durations, points: places.count).line)
case "server":
    guard arguments.count == 4, let queries = Int(arguments[3]), queries > 0 else { fail("usage: recycling-bench server URL FILE QUERIES") }
    let base = arguments[1]
    let places = features(in: arguments[2])
    let targets = origins(queries, around: places.map(\.position), seed: 11)
    let client = HTTPClient.shared
    let clock = ContinuousClock()
    var durations: [Double] = []
    // Warm-up: the first request loads the server's index.
    for (index, origin) in (origins(50, around: places.map(\.position), seed: 3) + targets).enumerated() {
        let request = HTTPClientRequest(url: "\(base)/v1/recycling/points?near=\(origin.latitude),\(origin.longitude)&limit=20")
        let start = clock.now
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 16 * 1024 * 1024)
        let elapsed = clock.now - start
        guard response.status == .ok, body.readableBytes > 2 else { fail("the server answered \(response.status.code)") }
        if index >= 50 {
            durations.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
        }
    }
    print(summary(durations, points: places.count).line)
default:
    fail("unknown mode \(mode): seed, local or server")
}
