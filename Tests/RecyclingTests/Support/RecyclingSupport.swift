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

/// The `eventual-server` and `sustainu` executables, built beside the test bundle.
enum Executables {
    static func path(_ name: String) -> String {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            folder = folder.deletingLastPathComponent()
        }
        return name
    }

    /// Loads the real recycling points and packaging rows into a live server's SQLite database,
    /// through the import commands an operator runs.
    static func seed(_ scratch: ScratchFolder) async throws {
        let database = scratch.url.appendingPathComponent("server.sqlite").path
        for (command, file) in [("import-points", SharedData.salzburg), ("import-packaging", SharedData.packaging)] {
            let outcome = try await CommandRun.run(path("eventual-server"), [command, file.path, "--database", database])
            #expect(outcome.status == 0, "\(command): \(outcome.stderr)")
        }
    }
}

/// A command run to its end, with what it printed.
struct CommandRun: Sendable {
    let status: Int32
    let stdout: String
    let stderr: String

    /// Runs `executable` to its end (see ProcessLaunch.run), without colours.
    static func run(_ executable: String, _ arguments: [String], input: String? = nil,
                    environment overrides: [String: String] = [:]) async throws -> CommandRun {
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        environment.merge(overrides) { $1 }
        let output = try await ProcessLaunch.run(executable, arguments, environment: environment, input: input)
        return CommandRun(status: output.status, stdout: output.stdout, stderr: output.stderr)
    }

    /// Exactly one line on stderr, nothing on stdout, a non-zero status: how every error looks.
    var isOneLineError: Bool {
        status != 0 && stdout.isEmpty && stderr.hasPrefix("sustainu: ") && stderr.hasSuffix("\n")
            && stderr.split(separator: "\n", omittingEmptySubsequences: false).count == 2
    }
}

/// A phone with SustainU: its own data directory; each command may name the server it reaches
/// (the live one, or `unreachableServer` for a basement).
struct Phone: Sendable {
    let dataDirectory: URL
    let server: URL

    /// - Parameter patient: give the server 20 s wherever the command waits for it (a machine busy
    ///   with the whole suite may take seconds to answer); false keeps the command's own budgets.
    /// - Parameter answerTimeout: the seconds to give instead of 20 (SUSTAINU_ANSWER_TIMEOUT).
    func run(_ arguments: [String], input: String? = nil, via other: URL? = nil, timeZone: String = "UTC",
             patient: Bool = true, answerTimeout: Int? = nil, columns: Int = 1000) async throws -> CommandRun {
        // NB: wide lines, so that the tests read whole sentences; the 80-column layout has its own test.
        var environment = ["SUSTAINU_DATA_DIR": dataDirectory.path, "SUSTAINU_SERVER": (other ?? server).absoluteString, "TZ": timeZone,
                           "COLUMNS": String(columns)]
        if patient { environment["SUSTAINU_ANSWER_TIMEOUT"] = String(answerTimeout ?? 20) }
        return try await CommandRun.run(Executables.path("sustainu"), arguments, input: input, environment: environment)
    }

    func offline(_ arguments: [String], input: String? = nil, columns: Int = 1000) async throws -> CommandRun {
        try await run(arguments, input: input, via: unreachableServer, columns: columns)
    }

    /// Registers a fresh person and signs them in online; returns their email.
    func signUp(name: String = "student") async throws -> (email: String, username: String) {
        let suffix = UUID().uuidString.prefix(6).lowercased()
        let email = "\(name).\(suffix)@example.com", username = "\(name)_\(suffix)"
        let registered = try await run(["register", "--username", username, "--email", email, "--password-stdin"], input: "long-password\n")
        #expect(registered.status == 0, "\(registered.stderr)")
        let login = try await run(["login", "--email", email, "--password-stdin"], input: "long-password\n")
        #expect(login.status == 0, "\(login.stderr)")
        return (email, username)
    }
}

/// The points `points --json` printed (beside their age and how many there are).
func pointsJSON(_ run: CommandRun) throws -> [[String: Any]] {
    let object = try #require(try json(run) as? [String: Any], "\(run.stdout)\(run.stderr)")
    return try #require(object["points"] as? [[String: Any]])
}

/// The JSON a `--json` command printed.
func json(_ run: CommandRun) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(run.stdout.utf8))
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
