import EventualAPI
import Foundation
import Logging
import Testing
@testable import EventualServer

/// The real data the recycling tests load.
enum RecyclingData {
    static let salzburg = SampleData.file("osm-recycling-salzburg.geojson")
    static let malaga = SampleData.file("osm-recycling-malaga-centre.geojson")
    static let packaging = SampleData.file("off-packagings-mousquetaires.csv")

    /// A file in the temporary folder with this text.
    static func file(_ text: String, extension ext: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("recycling-\(UUID().uuidString).\(ext)")
        try Data(text.utf8).write(to: url)
        return url
    }

    /// Runs `body` with the server's database opened beside it (an import, as the command does).
    static func withDatabase<T: Sendable>(_ location: DatabaseLocation, _ body: (Database) async throws -> T) async throws -> T {
        let database = try await Database.open(location, logger: Logger(label: "test"))
        do {
            let value = try await body(database)
            await database.close()
            return value
        } catch {
            await database.close()
            throw error
        }
    }

    /// A tiny valid PNG (1×1 grey pixel).
    static let png: Data = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==")!
}

struct PointJSON: Decodable, Equatable {
    let id: String
    let name: String?
    let latitude: Double
    let longitude: Double
    let kind: String
    let materials: [String]
    let visits: Int64
    let distanceMeters: Double?
}

struct PointListJSON: Decodable { let points: [PointJSON] }

struct VisitJSON: Decodable { let pointId: String; let visits: Int64; let counted: Bool }

struct PackagingPartJSON: Decodable, Equatable {
    let material: String
    let shape: String?
    let grams: Double?
    /// In a scan's answer only.
    var trashType: String? = nil
    var bin: String? = nil
    var binLabel: String? = nil
}

struct PackagingPageJSON: Decodable {
    struct Entry: Decodable { let barcode: String; let parts: [PackagingPartJSON] }
    let version: Int64
    let complete: Bool
    let entries: [Entry]
}

struct ScanJSON: Decodable, Equatable {
    let id: String
    let detected: Bool
    let trashType: String?
    let bin: String?
    let binLabel: String?
    let specialPoint: PointJSON?
    let parts: [PackagingPartJSON]?
    let points: Int
    let source: String
    let message: String
    var productName: String? = nil
}

struct ScoreJSON: Decodable {
    struct Day: Decodable { let day: String; let points: Int }
    let total: Int64
    let today: Int
    let streak: Int
    let bestStreak: Int
    let awardedScansToday: Int
    let dailyCap: Int
    let days: [Day]
}

extension API {
    /// POST /v1/recycling/scans with the given fields (nil fields are left out).
    func scan(_ id: String, as account: Account, takenAt: Date = Date(), timeZone: String? = nil, barcode: String? = nil,
              photo: Data? = nil, latitude: Double? = nil, longitude: Double? = nil) async throws -> Answer {
        var fields = [#""id":\#(jsonString(id))"#, #""takenAt":"\#(Self.timestamp(takenAt))""#]
        if let timeZone { fields.append(#""timeZone":\#(jsonString(timeZone))"#) }
        if let barcode { fields.append(#""barcode":"\#(barcode)""#) }
        if let photo { fields.append(#""photo":"\#(photo.base64EncodedString())""#) }
        if let latitude, let longitude { fields.append(#""latitude":\#(latitude),"longitude":\#(longitude)"#) }
        return try await send(.post, "/v1/recycling/scans", headers: account.bearer, json: "{" + fields.joined(separator: ",") + "}")
    }

    func score(as account: Account, timeZone: String = "UTC") async throws -> ScoreJSON {
        let answer = try await send(.get, "/v1/recycling/me?timeZone=\(timeZone)", headers: account.bearer)
        try #require(answer.status == .ok, "score: \(answer.text)")
        return try answer.decode(ScoreJSON.self)
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
