import ArgumentParser
import CommandLineSupport
import EventualAPI
import EventualKit
import Foundation
import Recycling

struct Points: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The nearest recycling points, with distance and materials (offline from the saved copy).",
        usage: "sustainu points [--near LAT,LON] [--material M] [--limit N]\n                [--json | --geojson]")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Where you are, as LAT,LON (e.g. 47.7981,13.0465).") var near: String?
    @Option(help: "Only points that accept this: \(PointMaterial.allCases.map(\.rawValue).joined(separator: ", ")).") var material: String?
    // NB: unconditional, so that a negative number is refused as out of range, not "Missing value".
    @Option(parsing: .unconditional, help: "How many points (1 to 1000).") var limit = 10
    @Flag(help: "Print the points as a GeoJSON FeatureCollection (for a map): every saved one, or those --near and --material choose.")
    var geojson = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        try usageCheck {
            _ = try parsedNear()
            _ = try parsedMaterial()
            guard (1...1000).contains(limit) else { throw RecyclingError.invalidLimit(limit) }
            if geojson && output.json { throw CLIError("Choose one of --geojson and --json") }
        }
    }

    func parsedNear() throws -> GeoPosition? {
        try near.map(Position.parse)
    }

    func parsedMaterial() throws -> PointMaterial? {
        try material.map { text in
            guard let material = PointMaterial(rawValue: text.lowercased()) else {
                throw CLIError("'\(text)' is not a material: use one of \(PointMaterial.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return material
        }
    }

    func run() async throws {
        let recycling = try await global.open()
        // NB: the filters given apply to a map too: ignoring them printed all 360 points for `--near … --limit 1`.
        if geojson, near == nil, material == nil {
            print(try GeoJSONOutput.render(try await recycling.allPoints().points.map(\.point)))
            return
        }
        let answer = try await recycling.points(near: try parsedNear(), material: try parsedMaterial(), limit: limit)
        if geojson {
            print(try GeoJSONOutput.render(answer.points.map(\.point)))
            return
        }
        if output.json {
            struct Shape: Encodable {
                let fetchedAt: String, savedCopy: Bool, total: Int
                let points: [PointJSON]
            }
            print(try Terminal.json(Shape(fetchedAt: Timestamp.iso8601(answer.fetchedAt), savedCopy: !answer.fresh, total: answer.total,
                                          points: answer.points.map(PointJSON.init))))
        } else {
            if !answer.fresh { print(Terminal.paint("Offline: recycling points saved \(age(answer.fetchedAt))", .yellow)) }
            if answer.points.isEmpty {
                print(material == nil ? "No recycling points are known yet." : "No saved point accepts \(material!).")
            } else {
                if let nearest = answer.points.first?.distanceMeters, nearest > 50_000 {
                    // NB: a list of points far away reads as if they were near, unless it says so.
                    say("No saved point is within 50 km of you: the nearest is \(Self.distance(nearest)) away.")
                }
                var table = Table("ID", "NAME", "DISTANCE", "MATERIALS")
                for nearby in answer.points {
                    table.add(.init(nearby.point.id), .init(nearby.point.title),
                              .init(nearby.distanceMeters.map(Self.distance) ?? "-"),
                              .init(nearby.point.materials.map(\.rawValue).joined(separator: ", ")))
                }
                print(table.render())
                if answer.total > answer.points.count {
                    let which = near == nil ? "first" : "nearest"
                    say("The \(answer.points.count) \(which) of \(answer.total) saved points\(material.map { " that take \($0)" } ?? ""): --limit N shows more (up to 1000), --geojson all.")
                }
            }
        }
        await announceClassified(recycling, json: output.json)
    }

    static func distance(_ meters: Double) -> String {
        meters < 1000 ? "\(Int(meters.rounded())) m" : String(format: "%.1f km", meters / 1000)
    }
}

struct PointDetails: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "point", abstract: "A recycling point's details (sustainu visit ID counts a visit).",
        usage: "sustainu point ID [--json]")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The point's id, as `sustainu points` lists it (e.g. node/457722547).") var id: String
    @OptionGroup var output: OutputOptions

    func validate() throws {
        try usageCheck {
            if id.trimmingCharacters(in: .whitespaces).isEmpty { throw CLIError("Give a point's id, as `sustainu points` lists them") }
        }
    }

    func run() async throws {
        let recycling = try await global.open()
        let point = try await recycling.point(id: id)
        if output.json {
            print(try Terminal.json(PointJSON(NearbyPoint(point: point, distanceMeters: nil))))
        } else {
            say(Terminal.paint(point.title, .bold))
            print("id         \(point.id)")
            print("kind       \(point.kind)")
            print("where      \(point.position.latitude),\(point.position.longitude)")
            print("accepts    \(point.materials.isEmpty ? "-" : point.materials.map(\.rawValue).joined(separator: ", "))")
            if let hours = point.openingHours { say("open       \(hours)") }
            if let name = point.operatorName { say("operator   \(name)") }
            if let text = point.description { say("about      \(text)") }
            print("visits     \(point.visits)")
        }
        await announceClassified(recycling, json: output.json)
    }
}

struct Visit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Say you are at a recycling point: counts your visit (queued when offline).", usage: "sustainu visit ID")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The point's id, as `sustainu points` lists it (e.g. node/457722547).") var id: String

    func validate() throws {
        try usageCheck {
            if id.trimmingCharacters(in: .whitespaces).isEmpty { throw CLIError("Give a point's id, as `sustainu points` lists them") }
        }
    }

    func run() async throws {
        let recycling = try await global.open()
        let (point, queued) = try await recycling.visit(pointID: id)
        if queued {
            say("Your visit to \(point.title) is saved on this device: it is counted when the server can be reached.")
        } else {
            say("Your visit to \(point.title) is counted (\(count(Int(point.visits), "visit", "visits")) in all).")
        }
        await announceClassified(recycling, json: false)
    }
}

/// A point as `points --json` prints it: every key present, null when not known.
struct PointJSON: Encodable {
    let id: String
    @JSONNullable var name: String?
    let latitude: Double
    let longitude: Double
    @JSONNullable var distanceMeters: Double?
    let materials: [String]
    let kind: String
    let visits: Int64
    @JSONNullable var openingHours: String?
    @JSONNullable var operatorName: String?
    @JSONNullable var description: String?

    init(_ nearby: NearbyPoint) {
        id = nearby.point.id
        name = nearby.point.name
        latitude = nearby.point.position.latitude
        longitude = nearby.point.position.longitude
        distanceMeters = nearby.distanceMeters.map { ($0 * 10).rounded() / 10 }
        materials = nearby.point.materials.map(\.rawValue)
        kind = nearby.point.kind
        visits = nearby.point.visits
        openingHours = nearby.point.openingHours
        operatorName = nearby.point.operatorName
        description = nearby.point.description
    }
}

/// Points as a GeoJSON FeatureCollection, which any map tool opens.
enum GeoJSONOutput {
    struct Collection: Encodable {
        let type = "FeatureCollection"
        let features: [Feature]
    }
    struct Feature: Encodable {
        let type = "Feature"
        let id: String
        let geometry: Geometry
        let properties: [String: String]
    }
    struct Geometry: Encodable {
        let type = "Point"
        let coordinates: [Double]
    }

    static func render(_ points: [RecyclingPoint]) throws -> String {
        try Terminal.json(Collection(features: points.map { point in
            var properties = ["name": point.title, "kind": point.kind, "materials": point.materials.map(\.rawValue).joined(separator: ";")]
            if let hours = point.openingHours { properties["opening_hours"] = hours }
            return Feature(id: point.id, geometry: Geometry(coordinates: [point.position.longitude, point.position.latitude]),
                           properties: properties)
        }))
    }
}
