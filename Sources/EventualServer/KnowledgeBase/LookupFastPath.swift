import EventualAPI
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// What a barcode look-up answers (see `APIService.lookUp(barcode:)`).
struct LookupAnswer: Sendable {
    let products: [ProductRecord]
    let token: String
    let packaging: [PackagingPart]?
}

/// `GET /products?barcode=DIGITS` answered beside the router, its JSON written by hand.
///
/// NB: the look-up is most of what the apps ask, and in the load test's profile a third of its
/// time went to the OpenAPI layer's `JSONEncoder` writing the product list (16 % of the server's
/// CPU). This answers the plain form of the request only, with the same `lookUp(barcode:)` and
/// the same JSON; anything else (another query, an Accept the route may refuse) goes to the
/// router, which answers and explains it as before. Errors are thrown to the edge responder,
/// which answers them as it answers the router's.
struct LookupFastPath: Sendable {
    let service: APIService
    static let route = "/products"

    /// The barcode of a look-up this answers, or nil when the router should answer the request.
    static func barcode(of request: Request) -> String? {
        guard request.method == .get, request.uri.path == route, let barcode = plainBarcode(in: request.uri.query),
              acceptsJSON(request.headers[values: .accept])
        else { return nil }
        return barcode
    }

    func respond(barcode: String) async throws -> Response {
        let answer = try await service.lookUp(barcode: barcode)
        var buffer = ByteBuffer()
        buffer.writeString(Self.json(answer))
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: buffer))
    }

    /// The barcode of a query that is exactly `barcode=` and 1 to 32 digits.
    static func plainBarcode(in query: String?) -> String? {
        guard let query, query.hasPrefix("barcode=") else { return nil }
        let value = query.dropFirst("barcode=".count)
        guard (1...32).contains(value.utf8.count), value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return String(value)
    }

    /// Whether the route's JSON is acceptable: no Accept header, or one that names JSON or anything.
    static func acceptsJSON(_ values: [String]) -> Bool {
        values.isEmpty || values.contains { $0.contains("application/json") || $0.contains("*/*") }
    }

    /// The `ProductList` JSON of the contract: what the OpenAPI layer writes for the same answer
    /// (absent optionals left out, dates as MillisecondDateTranscoder writes them), as a JSON value.
    static func json(_ answer: LookupAnswer) -> String {
        var out = "{\"products\":["
        let packaging = answer.packaging.map(packagingJSON)
        for (index, product) in answer.products.enumerated() {
            if index > 0 { out += "," }
            out += "{\"id\":"
            WireJSON.appendString(product.id, to: &out)
            out += ",\"name\":"
            WireJSON.appendString(product.name, to: &out)
            if let description = product.description {
                out += ",\"description\":"
                WireJSON.appendString(description, to: &out)
            }
            out += ",\"barcode\":"
            WireJSON.appendString(product.barcode, to: &out)
            out += ",\"userId\":"
            WireJSON.appendString(product.userID, to: &out)
            out += ",\"test\":false"
            if let img = product.img {
                out += ",\"img\":"
                WireJSON.appendString(img, to: &out)
            }
            out += ",\"score\":"
            out += String(product.score)
            if let packaging {
                out += ",\"packaging\":"
                out += packaging
            }
            out += ",\"createdAt\":\""
            out += MillisecondDateTranscoder.text(milliseconds: product.createdAt)
            out += "\",\"updatedAt\":\""
            out += MillisecondDateTranscoder.text(milliseconds: product.updatedAt)
            out += "\"}"
        }
        out += "],\"token\":"
        WireJSON.appendString(answer.token, to: &out)
        return out + "}"
    }

    private static func packagingJSON(_ parts: [PackagingPart]) -> String {
        var out = "["
        for (index, part) in parts.enumerated() {
            if index > 0 { out += "," }
            out += "{\"material\":"
            WireJSON.appendString(part.material.rawValue, to: &out)
            if let shape = part.shape {
                out += ",\"shape\":"
                WireJSON.appendString(shape, to: &out)
            }
            if let grams = part.grams {
                out += ",\"grams\":"
                WireJSON.appendNumber(grams, to: &out)
            }
            out += "}"
        }
        return out + "]"
    }
}
