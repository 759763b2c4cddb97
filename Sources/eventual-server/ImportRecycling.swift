import ArgumentParser
import EventualServer
import Foundation

/// `eventual-server import-points FILE`: loads OpenStreetMap recycling points (GeoJSON).
struct ImportPoints: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-points",
        abstract: "Load OpenStreetMap recycling points (an amenity=recycling GeoJSON export) for SustainU.",
        discussion: """
            Reads a GeoJSON FeatureCollection as Overpass exports it: Point features (a Polygon or \
            MultiPolygon counts as the centroid of its outer ring), with the tags amenity=recycling, \
            recycling:*=yes (the accepted materials), recycling_type (centre or container), name, \
            opening_hours, operator and description. Features that are not recycling points or are \
            broken are skipped and counted. Importing the same file again changes nothing; a point whose \
            tags or position changed is updated; points missing from the file are kept. Prints one line: \
            imported N, updated N, unchanged N, skipped N.
            """
    )

    @Argument(help: "The GeoJSON file (for example SampleData/osm-recycling-salzburg.geojson).")
    var file: String

    @OptionGroup var database: DatabaseOption

    func run() async throws {
        try requireReadable(file)
        let url = URL(fileURLWithPath: file)
        print(try await withDatabase(database) { try await PointImporter(database: $0).importGeoJSON(at: url) })
    }
}

/// `eventual-server import-packaging FILE`: loads Open Food Facts packaging rows.
struct ImportPackaging: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-packaging",
        abstract: "Load Open Food Facts packaging rows (barcode, part, material, weight) into the packaging catalogue.",
        discussion: """
            Finds its columns by header, in French as a retailer's export names them (GTIN, Type d'emballage, \
            Matériau, Poids unitaire vide en gramme, Nombre d'unités de composants) or in English (code or \
            barcode, shape, material, weight, units). Rows are grouped per barcode into the product's \
            packaging parts; rows without a valid barcode or a known material are skipped and counted. \
            Importing the same file again changes nothing; a barcode whose parts changed is replaced. Prints \
            one line: imported N, updated N, unchanged N, skipped N (barcodes; skipped counts rows).
            """
    )

    @Argument(help: "The CSV file (for example SampleData/off-packagings-mousquetaires.csv).")
    var file: String

    @OptionGroup var database: DatabaseOption

    func run() async throws {
        try requireReadable(file)
        let url = URL(fileURLWithPath: file)
        print(try await withDatabase(database) { try await PackagingImporter(database: $0).importCSV(at: url) })
    }
}
