import EventualAPI
import Foundation
import SQLKit
import Testing
@testable import EventualServer

@Suite("Recycling: import-points and import-packaging", .timeLimit(.minutes(3)))
struct RecyclingImportTests {
    @Test(arguments: Backend.available)
    func importingTheSameRealFileTwiceChangesNothingTheSecondTime(_ backend: Backend) async throws {
        let scratch = try await ScratchDatabase.make(backend)
        try await RecyclingData.withDatabase(scratch.location) { database in
            // When the Salzburg export is imported twice
            let first = try await PointImporter(database: database).importGeoJSON(at: RecyclingData.salzburg)
            let versionAfterFirst = try await database.withConnection { try await RecyclingVersions.value(.points, on: $0) }
            let second = try await PointImporter(database: database).importGeoJSON(at: RecyclingData.salzburg)
            // Then every point is imported once and found unchanged the second time
            #expect(first.description == "imported 360, updated 0, unchanged 0, skipped 0")
            #expect(second.description == "imported 0, updated 0, unchanged 360, skipped 0")
            // And the points' version (the ETag) did not move the second time
            #expect(try await database.withConnection { try await RecyclingVersions.value(.points, on: $0) } == versionAfterFirst)
            // And the tags became the vocabulary: glass_bottles=yes with glass=no is glass, clothes and shoes are textiles
            let stored = try await database.withConnection { sql in
                try await sql.select().columns("materials", "kind", "latitude", "longitude").from("recycling_points")
                    .where("id", .equal, "node/457722547").first()
            }
            let row = try #require(stored)
            #expect(try row.decode(column: "materials", as: String.self) == "glass,paper")
            #expect(try row.decode(column: "kind", as: String.self) == "container")
            #expect(try row.decode(column: "latitude", as: Double.self) == 47.7890375)
            #expect(try row.decode(column: "longitude", as: Double.self) == 13.0690924)
        }
        await scratch.remove()
    }

    @Test(arguments: Backend.available)
    func aChangedPointIsUpdatedAndBrokenOrForeignFeaturesAreSkippedNotFatal(_ backend: Backend) async throws {
        let scratch = try await ScratchDatabase.make(backend)
        try await RecyclingData.withDatabase(scratch.location) { database in
            let original = try RecyclingData.file("""
                {"type":"FeatureCollection","features":[
                  {"type":"Feature","id":"node/1","properties":{"amenity":"recycling","recycling_type":"centre","name":"Wertstoffhof",
                   "recycling:batteries":"yes","recycling:paint":"yes","recycling:books":"yes","opening_hours":"Mo-Fr 08:00-17:00",
                   "operator":"City"},"geometry":{"type":"Point","coordinates":[13.05,47.80]}},
                  {"type":"Feature","id":"way/2","properties":{"amenity":"recycling","recycling:glass":"yes"},
                   "geometry":{"type":"Polygon","coordinates":[[[13.0,47.0],[13.2,47.0],[13.2,47.2],[13.0,47.2],[13.0,47.0]]]}},
                  {"type":"Feature","id":"node/3","properties":{"amenity":"bench"},"geometry":{"type":"Point","coordinates":[13.0,47.0]}},
                  {"type":"Feature","id":"node/4","properties":{"amenity":"recycling"},"geometry":{"type":"Point","coordinates":[13.0,247.0]}},
                  {"type":"Feature","id":"node/5","properties":{"amenity":"recycling"},"geometry":{"type":"Point","coordinates":["a","b"]}},
                  {"type":"Feature","id":"node/6","properties":{"amenity":"recycling"},"geometry":null},
                  {"type":"Feature","id":"way/7","properties":{"amenity":"recycling"},"geometry":{"type":"LineString","coordinates":[[13,47],[14,48]]}},
                  {"type":"Feature","id":"node/\\u0000x","properties":{"amenity":"recycling"},"geometry":{"type":"Point","coordinates":[13,47]}},
                  {"type":"Feature","properties":null,"geometry":{"type":"Point","coordinates":[13,47]}},
                  42,
                  {"type":"Feature","id":"node/1","properties":{"amenity":"recycling","recycling_type":"centre","name":"Wertstoffhof",
                   "recycling:batteries":"yes","recycling:paint":"yes","recycling:books":"yes","opening_hours":"Mo-Fr 08:00-17:00",
                   "operator":"City"},"geometry":{"type":"Point","coordinates":[13.05,47.80]}}
                ]}
                """, extension: "geojson")
            // When a file with two good points, broken and foreign features and a repeated id is imported
            let first = try await PointImporter(database: database).importGeoJSON(at: original)
            // Then the two points are imported and everything else is skipped and counted
            #expect(first.description == "imported 2, updated 0, unchanged 0, skipped 9")
            let centre = try #require(try await database.withConnection { sql in
                try await sql.select().columns(RecyclingPointRecord.columns.map { SQLColumn($0) }).from("recycling_points")
                    .where("id", .equal, "node/1").first().map(RecyclingPointRecord.init(row:))
            })
            #expect(centre.kind == .centre)
            #expect(centre.materials == [.batteries, .hazardous])
            #expect(centre.openingHours == "Mo-Fr 08:00-17:00")
            #expect(centre.operator == "City")
            // And the polygon became the centre of its outer ring
            let way = try #require(try await database.withConnection { sql in
                try await sql.select().columns("latitude", "longitude").from("recycling_points").where("id", .equal, "way/2").first()
            })
            #expect(abs(try way.decode(column: "latitude", as: Double.self) - 47.1) < 1e-9)
            #expect(abs(try way.decode(column: "longitude", as: Double.self) - 13.1) < 1e-9)

            // When the centre's name and position change in a newer export
            let newer = try RecyclingData.file("""
                {"type":"FeatureCollection","features":[
                  {"type":"Feature","id":"node/1","properties":{"amenity":"recycling","recycling_type":"centre","name":"Recyclinghof Nord",
                   "recycling:batteries":"yes","recycling:paint":"yes","opening_hours":"Mo-Fr 08:00-17:00","operator":"City"},
                   "geometry":{"type":"Point","coordinates":[13.06,47.81]}},
                  {"type":"Feature","id":"way/2","properties":{"amenity":"recycling","recycling:glass":"yes"},
                   "geometry":{"type":"Polygon","coordinates":[[[13.0,47.0],[13.2,47.0],[13.2,47.2],[13.0,47.2],[13.0,47.0]]]}}
                ]}
                """, extension: "geojson")
            let before = try await database.withConnection { try await RecyclingVersions.value(.points, on: $0) }
            let second = try await PointImporter(database: database).importGeoJSON(at: newer)
            // Then it is updated in place and the other is unchanged, and the points' version moved
            #expect(second.description == "imported 0, updated 1, unchanged 1, skipped 0")
            let renamed = try await database.withConnection { sql in
                try await sql.select().columns("name", "latitude").from("recycling_points").where("id", .equal, "node/1").first()
            }
            #expect(try renamed?.decode(column: "name", as: String.self) == "Recyclinghof Nord")
            #expect(try renamed?.decode(column: "latitude", as: Double.self) == 47.81)
            #expect(try await database.withConnection { try await RecyclingVersions.value(.points, on: $0) } == before + 1)
        }
        await scratch.remove()
    }

    @Test func aFileThatIsNotGeoJSONIsAnErrorNotACrash() async throws {
        let scratch = try await ScratchDatabase.make(.sqlite)
        try await RecyclingData.withDatabase(scratch.location) { database in
            for text in ["not json", #"{"type":"Feature"}"#, "[]"] {
                let url = try RecyclingData.file(text, extension: "geojson")
                await #expect(throws: RecyclingImportError.self) { try await PointImporter(database: database).importGeoJSON(at: url) }
            }
        }
        await scratch.remove()
    }

    @Test(arguments: Backend.available)
    func packagingRowsAreGroupedPerBarcodeAndAReimportChangesNothing(_ backend: Backend) async throws {
        let scratch = try await ScratchDatabase.make(backend)
        try await RecyclingData.withDatabase(scratch.location) { database in
            // When the retailer's packaging rows are imported twice
            let first = try await PackagingImporter(database: database).importCSV(at: RecyclingData.packaging)
            let second = try await PackagingImporter(database: database).importCSV(at: RecyclingData.packaging)
            // Then its 18 barcodes are imported once, then unchanged
            #expect(first.description == "imported 18, updated 0, unchanged 0, skipped 0")
            #expect(second.description == "imported 0, updated 0, unchanged 18, skipped 0")
            // And a product's parts are its rows: shape, material, weight × units
            let catalogue = PackagingCatalogue(database: database)
            let pastry = try #require(try await catalogue.parts(gtin: "03250390017165"))
            #expect(pastry == [
                PackagingPart(material: .paper, shape: "Film / Enveloppage / Feuille / Housse", grams: 6.05),
                PackagingPart(material: .cardboard, shape: "Étui / Fourreau", grams: 11.6),
                PackagingPart(material: .plastic, shape: "Film / Enveloppage / Feuille / Housse", grams: 3.36),
            ])
            #expect(TrashType(packaging: pastry) == .cardboardBox)
            let steak = try #require(try await catalogue.parts(gtin: "03250390020745"))
            #expect(steak.first == PackagingPart(material: .plastic, shape: "Film / Enveloppage / Feuille / Housse", grams: 8.8))

            // When an English export changes one barcode's parts and has rows it cannot use
            let english = try RecyclingData.file("""
                code,shape,material,weight,units
                3250390017165,box,en:cardboard,12.5,1
                3250390017165,film,en:plastic,3,2
                12345,box,en:cardboard,1,1
                3250390020745,tray,en:unobtainium,1,1
                """, extension: "csv")
            let third = try await PackagingImporter(database: database).importCSV(at: english)
            // Then that barcode is replaced, and the unusable rows are skipped
            #expect(third.description == "imported 0, updated 1, unchanged 0, skipped 2")
            #expect(try await catalogue.parts(gtin: "03250390017165") == [
                PackagingPart(material: .cardboard, shape: "box", grams: 12.5), PackagingPart(material: .plastic, shape: "film", grams: 6),
            ])
        }
        await scratch.remove()
    }

    @Test(.tags(.endToEnd)) func theCommandsPrintOneSummaryLineAndRefuseABadPath() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-recycling-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("r.sqlite").path
        let points = try await Self.run(["import-points", RecyclingData.malaga.path, "--database", database])
        #expect(points.status == 0, "\(points.stderr)")
        #expect(points.stdout == "imported 830, updated 0, unchanged 0, skipped 0\n")
        let again = try await Self.run(["import-points", "--database", database, RecyclingData.malaga.path])
        #expect(again.stdout == "imported 0, updated 0, unchanged 830, skipped 0\n")
        let packaging = try await Self.run(["import-packaging", RecyclingData.packaging.path, "--database", database])
        #expect(packaging.stdout == "imported 18, updated 0, unchanged 0, skipped 0\n", "\(packaging.stderr)")
        let missing = try await Self.run(["import-points", "/no/such/file.geojson", "--database", database])
        #expect(missing.status != 0)
        #expect(missing.stderr.split(separator: "\n").count == 1 && missing.stderr.contains("/no/such/file.geojson"))
        let notGeoJSON = try await Self.run(["import-points", RecyclingData.packaging.path, "--database", database])
        #expect(notGeoJSON.status != 0)
        #expect(notGeoJSON.stderr.contains("not an OpenStreetMap GeoJSON export"), "\(notGeoJSON.stderr)")
        let help = try await Self.run(["import-packaging", "--help"])
        #expect(help.status == 0 && help.stdout.contains("--database"))
    }

    private static func run(_ arguments: [String]) async throws -> CommandOutcome {
        try await BuiltExecutable.run("eventual-server", arguments)
    }
}
