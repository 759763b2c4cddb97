import EventualAPI
import Foundation
import Testing
@testable import EventualServer

@Suite("Recycling: tips, the packaging catalogue and packaging in product look-ups", .timeLimit(.minutes(2)))
struct RecyclingCatalogueTests {
    @Test func thereIsOneTipPerTrashTypeWithItsBinAndAnETag() async throws {
        try await withServer(.sqlite) { api in
            let answer = try await api.send(.get, "/v1/recycling/tips")
            #expect(answer.status == .ok)
            struct Tips: Decodable {
                struct Tip: Decodable { let trashType: String; let what: String; let bin: String; let binLabel: String; let prepare: String }
                let tips: [Tip]
            }
            let tips = try answer.decode(Tips.self).tips
            #expect(tips.map(\.trashType) == TrashType.allCases.map(\.rawValue))
            for tip in tips {
                let type = try #require(TrashType(rawValue: tip.trashType))
                #expect(tip.bin == type.bin.colour && tip.binLabel == type.bin.label)
                #expect(!tip.what.isEmpty && !tip.prepare.isEmpty && tip.prepare.count < 200)
            }
            let etag = try #require(answer.headers[.eTag])
            #expect(try await api.send(.get, "/v1/recycling/tips", headers: [.ifNoneMatch: etag]).status == .notModified)
            #expect(try await api.send(.get, "/v1/recycling/tips", headers: [.ifNoneMatch: "W/\(etag)"]).status == .notModified)
            #expect(try await api.send(.get, "/v1/recycling/tips", headers: [.ifNoneMatch: "\"other\""]).status == .ok)
            #expect(try await api.send(.get, "/v1/recycling/tips", headers: [.ifNoneMatch: "\"other\", \(etag)"]).status == .notModified,
                    "a list of entity tags, read as sent")
        }
    }

    @Test(arguments: Backend.available)
    func packagingDeltasPageByVersionAndEndComplete(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            // An empty catalogue is complete at version 0
            let empty = try await api.send(.get, "/v1/recycling/packaging").decode(PackagingPageJSON.self)
            #expect(empty.complete && empty.version == 0 && empty.entries.isEmpty)
            try await RecyclingData.withDatabase(location) { database in
                _ = try await PackagingImporter(database: database).importCSV(at: RecyclingData.packaging)
            }
            // Paging 5 at a time gathers all 18 barcodes once each, the last page complete
            var since: Int64 = 0
            var barcodes: [String] = []
            var pages = 0
            var etag = ""
            while true {
                let answer = try await api.send(.get, "/v1/recycling/packaging?since=\(since)&limit=5")
                #expect(answer.status == .ok)
                let page = try answer.decode(PackagingPageJSON.self)
                barcodes += page.entries.map(\.barcode)
                since = page.version
                pages += 1
                if page.complete {
                    etag = try #require(answer.headers[.eTag])
                    break
                }
                #expect(page.entries.count == 5)
                try #require(pages < 10)
            }
            #expect(barcodes.count == 18 && Set(barcodes).count == 18)
            #expect(barcodes.allSatisfy { $0.count == 14 })
            #expect(pages == 4)
            // Nothing new: 304 on the ETag, and an empty complete page from the last version
            #expect(try await api.send(.get, "/v1/recycling/packaging?since=\(since)", headers: [.ifNoneMatch: etag]).status == .notModified)
            let none = try await api.send(.get, "/v1/recycling/packaging?since=\(since)").decode(PackagingPageJSON.self)
            #expect(none.complete && none.entries.isEmpty && none.version == since)
            // When one barcode changes, the delta since then is that barcode alone
            let change = try RecyclingData.file("code,material,shape,weight\n3250390017165,glass,jar,200\n", extension: "csv")
            try await RecyclingData.withDatabase(location) { database in
                _ = try await PackagingImporter(database: database).importCSV(at: change)
            }
            let delta = try await api.send(.get, "/v1/recycling/packaging?since=\(since)", headers: [.ifNoneMatch: etag])
            #expect(delta.status == .ok)
            let page = try delta.decode(PackagingPageJSON.self)
            #expect(page.entries.map(\.barcode) == ["03250390017165"])
            #expect(page.entries.first?.parts == [PackagingPartJSON(material: "glass", shape: "jar", grams: 200)])
            #expect(page.complete && page.version == since + 1)
            for query in ["since=-1", "limit=0", "limit=10001", "since=abc"] {
                #expect(try await api.send(.get, "/v1/recycling/packaging?\(query)").status == .badRequest, "\(query)")
            }
        }
    }

    @Test(arguments: Backend.available)
    func aProductLookUpCarriesItsPackagingAndOthersStayByteForByteTheSame(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let account = try await api.signUp("shopper")
            // Given a product with known packaging and one without
            _ = try await api.createProduct("3250390017165", name: "Pâte feuilletée", as: account)
            let plain = Barcodes.unique()
            _ = try await api.createProduct(plain, name: "Plain", as: account)
            let before = try await api.lookup("3250390017165", as: account)
            #expect(!before.text.contains("packaging"), "no packaging before the catalogue knows it")
            try await RecyclingData.withDatabase(location) { database in
                _ = try await PackagingImporter(database: database).importCSV(at: RecyclingData.packaging)
            }
            // When both are looked up
            let known = try await api.lookup("3250390017165", as: account)
            let unknown = try await api.lookup(plain, as: account)
            // Then the first carries its parts and the second has no packaging key at all
            struct Products: Decodable { struct Product: Decodable { let name: String; let packaging: [PackagingPartJSON]? }; let products: [Product] }
            let parts = try known.decode(Products.self).products.first?.packaging
            #expect(parts?.map(\.material) == ["paper", "cardboard", "plastic"])
            #expect(parts?.first?.grams == 6.05)
            #expect(!unknown.text.contains("packaging"))
            #expect(try unknown.decode(ProductListJSON.self).products.map(\.name) == ["Plain"])
        }
    }
}
