import EventualAPI
import Foundation
import Hummingbird
import Testing
@testable import EventualServer

@Suite("Barcode look-ups answered beside the router", .timeLimit(.minutes(2)))
struct LookupFastPathTests {
    /// Products with everything a hand-written encoder can get wrong: quotes, backslashes,
    /// control characters, non-ASCII text, a slash, absent optionals, negative and large scores,
    /// dates before 1970 and far ahead.
    private static let products = [
        ProductRecord(id: "p1", gtin: "00049000028911", barcode: "049000028911", name: #"Crème "brûlée" \ 1/2"#,
                      description: "Line one\nline\ttwo\u{01}", img: "data:image/png;base64,iVBORw0KGgo=", userID: "u1",
                      score: -3, createdAt: 1_700_000_000_123, updatedAt: 1_700_000_000_999),
        ProductRecord(id: "p2", gtin: "00049000028911", barcode: "0049000028911", name: "日本茶 🍵", description: nil, img: nil,
                      userID: "u2", score: 9_007_199_254_740_993, createdAt: -86_400_001, updatedAt: 253_402_300_799_999),
    ]

    @Test(arguments: [nil, [], [PackagingPart(material: .plastic, shape: "film", grams: 2.5),
                               PackagingPart(material: .cardboard, shape: nil, grams: nil),
                               PackagingPart(material: .glass, shape: "jar", grams: 250)]] as [[PackagingPart]?])
    func theHandWrittenJSONIsTheValueTheOpenAPILayerWrites(_ packaging: [PackagingPart]?) throws {
        let answer = LookupAnswer(products: Self.products, token: "a.b-c_d", packaging: packaging)
        let list = Components.Schemas.ProductList(products: answer.products.map { product in
            var item = Components.Schemas.Product(product, withScore: true)
            item.packaging = packaging?.map(Components.Schemas.PackagingPart.init)
            return item
        }, token: answer.token)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(try MillisecondDateTranscoder().encode(date))
        }
        let expected = try JSONSerialization.jsonObject(with: encoder.encode(list)) as? NSDictionary
        let written = try JSONSerialization.jsonObject(with: Data(LookupFastPath.json(answer).utf8)) as? NSDictionary
        #expect(written != nil)
        #expect(written == expected, "\(LookupFastPath.json(answer))")
        // And the generated client reads it back to the same products
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            try MillisecondDateTranscoder().decode(try decoder.singleValueContainer().decode(String.self))
        }
        let decoded = try decoder.decode(Components.Schemas.ProductList.self, from: Data(LookupFastPath.json(answer).utf8))
        #expect(decoded.products.map(\.name) == Self.products.map(\.name))
        #expect(decoded.products.map(\.score) == Self.products.map { Int($0.score) })
    }

    @Test func onlyThePlainFormIsAnsweredBesideTheRouter() {
        #expect(LookupFastPath.plainBarcode(in: "barcode=049000028911") == "049000028911")
        for query in [nil, "", "barcode=", "barcode=12a4", "barcode=1%32", "barcode=1&x=2", "x=1&barcode=1", "barcode=" + String(repeating: "1", count: 33)] {
            #expect(LookupFastPath.plainBarcode(in: query) == nil, "\(query ?? "nil")")
        }
        #expect(LookupFastPath.acceptsJSON([]))
        #expect(LookupFastPath.acceptsJSON(["application/json"]))
        #expect(LookupFastPath.acceptsJSON(["text/html, */*;q=0.8"]))
        #expect(!LookupFastPath.acceptsJSON(["text/html"]))
    }

    @Test(arguments: Backend.available)
    func theFastAndTheRoutedAnswerAgreeAndErrorsKeepTheirShape(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let barcode = Barcodes.unique()
            _ = try await api.createProduct(barcode, name: #"Oat "drink" 1/2 \ l"#, as: account)
            let fast = try await api.lookup(barcode, as: account)
            // NB: an unknown query parameter is not the plain form: the router answers it.
            let routed = try await api.send(.get, "/products?barcode=\(barcode)&unused=1", headers: account.bearer)
            #expect(fast.status == .ok && routed.status == .ok, "\(fast.text) \(routed.text)")
            #expect(fast.headers[.contentType] == routed.headers[.contentType])
            func withoutToken(_ answer: Answer) throws -> NSDictionary? {
                let object = try JSONSerialization.jsonObject(with: Data(answer.text.utf8)) as? NSDictionary
                let copy = object?.mutableCopy() as? NSMutableDictionary
                copy?.removeObject(forKey: "token")
                return copy
            }
            #expect(try withoutToken(fast) == withoutToken(routed))
            // The errors are the route's: 401 without a valid token, 400 for a bad check digit
            let anonymous = try await api.send(.get, "/products?barcode=\(barcode)")
            #expect(anonymous.status == .unauthorized)
            #expect(try anonymous.error().message.isEmpty == false)
            let badToken = try await api.send(.get, "/products?barcode=\(barcode)", headers: [.authorization: "Bearer nope"])
            #expect(badToken.status == .unauthorized)
            let badDigit = try await api.send(.get, "/products?barcode=049000028912", headers: account.bearer)
            #expect(badDigit.status == .badRequest, "\(badDigit.text)")
        }
    }
}
