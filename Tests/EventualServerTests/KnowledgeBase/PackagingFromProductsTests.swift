import EventualAPI
import Foundation
import Logging
import Testing
@testable import EventualServer

@Suite("Open Food Facts' packaging columns: imported, and naming each part's bin when a barcode is scanned", .timeLimit(.minutes(3)))
struct PackagingFromProductsTests {
    static let sample = SampleData.file("off-products-1000-slim.csv")
    /// Rows of the sample: "Glass, Bottle"; "Glass, Jar, Lid, Pet-bottle"; "Bag" only; "Metal, Recyclable Metals, Aluminium, Cardboard, Container".
    static let (glassBottle, jarAndBottle, bagOnly, tinInABox) = ("0008274000078", "0009800895250", "0000501050603", "0009542009984")

    @Test func tagsBecomePartsWithoutGuessing() {
        func parts(_ tags: String, _ text: String = "") -> [String] {
            OpenFoodFactsPackaging.parts(tags: tags, text: text).map { part in part.shape.map { "\(part.material.rawValue) (\($0))" } ?? part.material.rawValue }
        }
        #expect(parts("en:glass,en:bottle") == ["glass (bottle)"])
        #expect(parts("en:glass,en:jar,en:lid,en:pet-bottle") == ["glass", "plastic (bottle)"])
        #expect(parts("en:glass-jar,en:lid") == ["glass (jar)"])
        #expect(parts("en:metal,en:plastic,en:recyclable-metals,en:aluminium,en:unfrozen") == ["metal", "plastic"])
        #expect(parts("en:plastic,en:bag,en:cardboard") == ["plastic", "cardboard"], "a lone shape is no part's when two materials are named")
        #expect(parts("en:can,en:drink-can") == ["metal (can)"])
        #expect(parts("en:plastic,en:bag,en:card-sleeve,en:mixed-plastic-sleeve") == ["plastic (sleeve)", "cardboard (sleeve)"])
        #expect(parts("pt:frasco-de-cristal") == ["glass"])
        #expect(parts("en:bag") == [] && parts("en:bucket") == [] && parts("en:unknown") == [] && parts("de:würfel") == [])
        #expect(parts("", "Plastique, Carton") == ["plastic", "cardboard"], "the free text when there are no tags")
        #expect(parts("", "") == [])
    }

    @Test(arguments: Backend.available)
    func aGlassBottleFromTheSampleIsTheBlueBinAndEachPartIsNamed(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            try await RecyclingData.withDatabase(location) { database in
                let first = try await ProductImporter(database: database).importCSV(at: Self.sample)
                let second = try await ProductImporter(database: database).importCSV(at: Self.sample)
                #expect(second == .init(imported: 0, updated: 0, unchanged: first.imported, skipped: first.skipped))
            }
            let account = try await api.signUp("bottles")
            // A glass bottle, known only from the products' packaging_tags
            let bottle = try await api.scan("g-1", as: account, barcode: Self.glassBottle).decode(ScanJSON.self)
            #expect(bottle.detected && bottle.trashType == "Glass Bottle" && bottle.bin == "blue" && bottle.source == "barcode")
            #expect(bottle.parts == [PackagingPartJSON(material: "glass", shape: "bottle", grams: nil,
                                                       trashType: "Glass Bottle", bin: "blue", binLabel: Bin.blue.label)])
            #expect(bottle.points == 50)
            // Two materials: each part with its bin, and the message names both
            let jar = try await api.scan("g-2", as: account, barcode: Self.jarAndBottle).decode(ScanJSON.self)
            #expect(jar.parts?.map(\.material) == ["glass", "plastic"])
            #expect(jar.parts?.allSatisfy { $0.bin == "blue" && $0.binLabel == Bin.blue.label } == true)
            #expect(jar.message.contains("glass in the blue bin") && jar.message.contains("plastic (bottle) in the blue bin"), "\(jar.message)")
            let box = try await api.scan("g-3", as: account, barcode: Self.tinInABox).decode(ScanJSON.self)
            #expect(box.parts?.map(\.bin) == ["blue", "grey"])
            #expect(box.message.contains("cardboard in the grey bin"), "\(box.message)")
            // A barcode that was found, with packaging that names no material: not "no item detected"
            let bag = try await api.scan("g-4", as: account, barcode: Self.bagOnly).decode(ScanJSON.self)
            #expect(!bag.detected && bag.points == 0 && bag.productName != nil)
            #expect(bag.message.hasPrefix("Found \(bag.productName ?? "?"), but its packaging is not known yet"), "\(bag.message)")
            #expect(!bag.message.lowercased().contains("no item detected"))
            // And the packaging catalogue that devices load carries the imported parts
            let page = try await api.send(.get, "/v1/recycling/packaging?limit=10000", headers: account.bearer).decode(PackagingPageJSON.self)
            #expect(page.entries.contains { $0.barcode == "0" + Self.glassBottle && $0.parts.map(\.material) == ["glass"] })
        }
    }

    @Test(arguments: Backend.available)
    func aRetailersPartsAreNeverReplacedByAProductsImport(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let barcode = Barcodes.unique()
            let products = try Self.csv("code,product_name,packaging_tags\n\(barcode),Jam,\"en:glass,en:jar\"\n")
            let retailer = try Self.csv("code,material,shape,weight\n\(barcode),Verre,Pot,210\n\(barcode),Métal,Couvercle,8\n")
            let newer = try Self.csv("code,product_name,packaging_tags\n\(barcode),Jam,en:plastic\n")
            try await RecyclingData.withDatabase(location) { database in
                _ = try await ProductImporter(database: database).importCSV(at: products)
                #expect(try await PackagingCatalogue(database: database).parts(gtin: try GTIN(validating: barcode).normalized)?.count == 1)
                _ = try await PackagingImporter(database: database).importCSV(at: retailer)
                // A newer products export changes its packaging: the retailer's two weighed parts stay
                #expect(try await ProductImporter(database: database).importCSV(at: newer).unchanged == 1)
                let parts = try await PackagingCatalogue(database: database).parts(gtin: try GTIN(validating: barcode).normalized)
                #expect(parts?.map(\.material) == [.glass, .metal] && parts?.first?.grams == 210)
            }
            _ = api
        }
    }

    @Test(arguments: Backend.available)
    func partsANewerExportNoLongerNamesAreForgottenEverywhere(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let barcode = Barcodes.unique()
            let account = try await api.signUp("forget")
            try await RecyclingData.withDatabase(location) { database in
                _ = try await ProductImporter(database: database).importCSV(at: try Self.csv("code,product_name,packaging_tags\n\(barcode),Soup,en:can\n"))
                let cleared = try await ProductImporter(database: database).importCSV(at: try Self.csv("code,product_name,packaging_tags\n\(barcode),Soup,\n"))
                #expect(cleared.updated == 1)
            }
            let scan = try await api.scan("f-1", as: account, barcode: barcode).decode(ScanJSON.self)
            #expect(!scan.detected && scan.productName == "Soup" && scan.message.hasPrefix("Found Soup"))
        }
    }

    private static func csv(_ text: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("packaging-\(UUID().uuidString).csv")
        try Data(text.utf8).write(to: url)
        return url
    }
}
