import ArgumentParser
import EventualServer
import Foundation
import Logging

/// `eventual-server import-shops FILE [--demo-offers]`: loads OpenStreetMap shops for SpendiQ's offers.
struct ImportShops: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-shops",
        abstract: "Load shops from an OpenStreetMap GeoJSON export, for SpendiQ's offers near a person.",
        discussion: """
            Reads Point features with a shop=* property, or an amenity=* where money is spent (restaurant, cafe, bar, \
            pharmacy, fuel...), as in SampleData/osm-shops-monaco.geojson; other features (a recycling container, a \
            vacant shop) are skipped and counted. \
            Importing the same file again changes nothing; moved or renamed shops are updated in place. With \
            --demo-offers, every shop without one gets a made-up offer by its type, marked as a demo. Prints one line: \
            imported N, updated N, unchanged N, skipped N, demo offers N. Data © OpenStreetMap contributors, ODbL.
            """
    )

    @Argument(help: "The GeoJSON file.")
    var file: String

    @Flag(help: "Give each shop a made-up offer by its type, marked as a demo.")
    var demoOffers = false

    @OptionGroup var database: DatabaseOption

    func run() async throws {
        try requireReadable(file)
        let url = URL(fileURLWithPath: file), demo = demoOffers
        print(try await withDatabase(database) { try await ShopImporter(database: $0).importGeoJSON(at: url, demoOffers: demo) })
    }
}
