@_exported import EventualTestSupport
import BarcodeImages
import EventualAPI
import EventualKit
import Foundation
import Testing
@testable import Recycling

/// The real data the tests use, from the repository's `SampleData/` folder.
enum SharedData {
    static let folder = SampleData.folder
    static let salzburg = folder.appendingPathComponent("osm-recycling-salzburg.geojson")
    static let malaga = folder.appendingPathComponent("osm-recycling-malaga-centre.geojson")
    static let packaging = folder.appendingPathComponent("off-packagings-mousquetaires.csv")
    /// PATE FEUILLETEE: a paper film (6.05 g), a cardboard sleeve (11.6 g), a PP film (3.36 g).
    static let pastryBarcode = "3250390017165"
    /// A product with no packaging data.
    static let unknownBarcode = Barcodes.milk
    /// The centre of Salzburg's old town.
    static let salzburgCentre = GeoPosition(latitude: 47.7981, longitude: 13.0465)

    /// Loads the real recycling points and packaging rows into a live server's SQLite database,
    /// through the import commands an operator runs.
    static func seed(_ scratch: ScratchFolder) async throws {
        let database = scratch.url.appendingPathComponent("server.sqlite").path
        for (command, file) in [("import-points", salzburg), ("import-packaging", packaging)] {
            let outcome = try await BuiltExecutable.run("eventual-server", [command, file.path, "--database", database])
            #expect(outcome.status == 0, "\(command): \(outcome.stderr)")
        }
    }

    /// The positions of the points of an OSM GeoJSON file, read by the test itself.
    static func positions(_ file: URL) throws -> [(id: String, position: GeoPosition)] {
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        let features = try #require(json["features"] as? [[String: Any]])
        return features.compactMap { feature in
            guard let geometry = feature["geometry"] as? [String: Any], let coordinates = geometry["coordinates"] as? [Double],
                  let id = (feature["properties"] as? [String: Any])?["@id"] as? String else { return nil }
            return (id, GeoPosition(latitude: coordinates[1], longitude: coordinates[0]))
        }
    }
}

/// A phone with SustainU: its own data directory; each command may name the server it reaches
/// (the live one, or `unreachableServer` for a basement). Lines are wide and the time zone UTC
/// unless a run says otherwise.
struct Phone: Sendable {
    let dataDirectory: URL
    let server: URL

    private var sustainu: CommandProcess {
        // NB: wide lines, so that the tests read whole sentences; the 80-column layout has its own test.
        CommandProcess("sustainu", dataDirectory: dataDirectory, server: server, environment: ["TZ": "UTC", "COLUMNS": "1000"])
    }

    /// - Parameter patient: give the server 20 s wherever the command waits for it (a machine busy
    ///   with the whole suite may take seconds to answer); false keeps the command's own budgets.
    /// - Parameter answerTimeout: the seconds to give instead of 20 (SUSTAINU_ANSWER_TIMEOUT).
    func run(_ arguments: [String], input: String? = nil, via other: URL? = nil, timeZone: String = "UTC",
             patient: Bool = true, answerTimeout: Int? = nil, columns: Int = 1000) async throws -> CommandOutcome {
        try await sustainu.run(arguments, input: input, server: other, answerTimeout: patient ? answerTimeout ?? 20 : nil,
                               environment: ["TZ": timeZone, "COLUMNS": String(columns)])
    }

    func offline(_ arguments: [String], input: String? = nil, columns: Int = 1000) async throws -> CommandOutcome {
        try await run(arguments, input: input, via: unreachableServer, columns: columns)
    }

    /// Registers a fresh person and signs them in online.
    func signUp(name: String = "student") async throws -> (email: String, username: String) {
        try await sustainu.signUp(name: name)
    }
}

/// The points `points --json` printed (beside their age and how many there are).
func pointsJSON(_ run: CommandOutcome) throws -> [[String: Any]] {
    let object = try #require(try json(run) as? [String: Any], "\(run.stdout)\(run.stderr)")
    return try #require(object["points"] as? [[String: Any]])
}

/// The JSON a `--json` command printed.
func json(_ run: CommandOutcome) throws -> Any {
    try run.json()
}

/// A JPEG photo of a product's EAN-13 barcode, as a phone would take it.
func barcodePhoto(_ code: String, in folder: URL) throws -> URL {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let pgm = folder.appendingPathComponent("\(code).pgm")
    try EAN13Drawing.pgm(code).write(to: pgm)
    let photo = folder.appendingPathComponent("\(code).jpg")
    try GreyImage(contentsOf: pgm).jpeg(quality: 85).write(to: photo)
    return photo
}
