import EventualAPI
import Foundation

extension APIService {
    static let nameLengths = 1...200
    static let maxDescriptionLength = 2000

    /// NB: most look-ups never reach this handler. The plain `GET /products?barcode=DIGITS` is
    /// answered beside the router by `LookupFastPath` (KnowledgeBase/LookupFastPath.swift), with the
    /// same `lookUp(barcode:)` below and its reads in KnowledgeBase/BarcodeLookupReads.swift; only
    /// the other forms of the request come here. A change to the look-up's answer goes in both.
    func getProducts(_ input: Operations.GetProducts.Input) async throws -> Operations.GetProducts.Output {
        let answer = try await lookUp(barcode: input.query.barcode)
        return .ok(.init(body: .json(.init(products: answer.products.map { product in
            var item = Components.Schemas.Product(product, withScore: true)
            item.packaging = answer.packaging?.map { Components.Schemas.PackagingPart($0) }
            return item
        }, token: answer.token))))
    }

    /// The products of a barcode, best first, with a session token for it and, when the packaging
    /// catalogue knows the barcode, what its packaging is made of (an Eventual addition). Both
    /// `GET /products` and its fast path (`LookupFastPath`) answer with this.
    func lookUp(barcode: String) async throws -> LookupAnswer {
        guard let bearer = RequestScope.current?.bearerToken else { throw Self.missingToken }
        guard let gtin = try? GTIN(validating: barcode) else {
            // NB: a bad token is a 401 before a bad barcode is a 400, as on every other route.
            _ = try await authenticatedUserID()
            _ = try GTIN(validating: barcode)
            throw APIError.badRequest("barcode is invalid")
        }
        // NB: the token check and the products in one read (one round trip on PostgreSQL).
        let (record, products, packaging) = try await lookupReads.lookup(tokenHash: AccessToken.hash(bearer), gtin: gtin.normalized)
        let now = UnixMillis.now()
        guard let record, record.isValid(at: now) else { throw Self.invalidToken }
        let token = sessionTokens.issue(userID: record.userID, gtin: gtin, now: now)
        return LookupAnswer(products: products, token: token, packaging: try packaging.map { try PackagingCatalogue.decode($0) })
    }

    func postProduct(_ input: Operations.PostProduct.Input) async throws -> Operations.PostProduct.Output {
        guard case .json(let body) = input.body else { throw APIError.badRequest("expected a JSON body") }
        try TextRules.check(body.name, field: "name")
        if let description = body.description { try TextRules.check(description, field: "description", .multiLine) }
        if let img = body.img { try TextRules.check(img, field: "img") }
        try TextRules.check(body.token, field: "token")
        let userID = try await authenticatedUserID()
        // NB: lengths are counted as sent, in code points, as the contract's maxLength counts them;
        // the spaces around a name or a description are trimmed only for storing it.
        guard Self.nameLengths.contains(body.name.unicodeScalars.count) else {
            throw APIError.badRequest("name must be \(Self.nameLengths.lowerBound) to \(Self.nameLengths.upperBound) characters long")
        }
        let name = TextRules.trimmingSpaces(body.name)
        guard !name.isEmpty else { throw APIError.badRequest("name must not be only spaces") }
        guard (body.description?.unicodeScalars.count ?? 0) <= Self.maxDescriptionLength else {
            throw APIError.badRequest("description must be at most \(Self.maxDescriptionLength) characters long")
        }
        let description = body.description?.trimmingCharacters(in: .whitespacesAndNewlines)
        let isTest = try Self.flag(body.test)
        let gtin = try GTIN(validating: body.barcode)
        let claims = try sessionTokens.verify(body.token, userID: userID, now: UnixMillis.now())
        guard claims.gtin == gtin.normalized else {
            throw APIError.forbidden("session token was issued for another barcode: look \(body.barcode) up first")
        }
        // NB: the fingerprint leaves the session token out: a client retrying after a lost answer
        // looks the barcode up again and holds a new token for the same request.
        let replay = try idempotency.request(key: input.headers.idempotencyKey, scope: "user:\(userID)",
                                             body: ProductFingerprint(gtin: gtin.normalized, name: name, description: description,
                                                                      test: isTest, img: body.img))

        let now = UnixMillis.now()
        let record = ProductRecord(id: UUID().uuidString.lowercased(), gtin: gtin.normalized, barcode: body.barcode,
                                   name: name, description: description, img: body.img, userID: userID,
                                   score: 0, createdAt: now, updatedAt: now)
        let products = self.products, quota = quotas.productsPerUser, byteQuota = quotas.bytesPerUser
        let product = try await idempotency.perform(replay) { sql in
            // NB: a test product "disappears instantly": answered like a real one, never stored.
            if !isTest {
                try await products.requireRoom(for: userID, quota: quota, on: sql)
                try await StorageUsage.add(StorageUsage.bytes(of: record), for: userID, quota: byteQuota, on: sql)
                try await products.insert(record, on: sql)
            }
            var answer = Components.Schemas.Product(record, withScore: false)
            answer.test = isTest
            return answer
        }
        return .created(.init(body: .json(product)))
    }

    func deleteProduct(_ input: Operations.DeleteProduct.Input) async throws -> Operations.DeleteProduct.Output {
        try TextRules.check(input.path.id, field: "id")
        let userID = try await authenticatedUserID()
        let product = try await products.delete(id: input.path.id, by: userID)
        return .ok(.init(body: .json(Components.Schemas.Product(product, withScore: true))))
    }

    func postVote(_ input: Operations.PostVote.Input) async throws -> Operations.PostVote.Output {
        guard case .json(let body) = input.body else { throw APIError.badRequest("expected a JSON body") }
        try TextRules.check(body.productId, field: "productId")
        try TextRules.check(body.token, field: "token")
        let userID = try await authenticatedUserID()
        guard (-5...5).contains(body.rating) else { throw APIError.badRequest("rating must be an integer from -5 to 5") }
        let now = UnixMillis.now()
        let claims = try sessionTokens.verify(body.token, userID: userID, now: now)
        let vote = try await products.vote(productID: body.productId, userID: userID, rating: body.rating,
                                           allowedGTIN: claims.gtin, now: now)
        return .created(.init(body: .json(.init(
            id: vote.id, rating: vote.rating, productId: vote.productID, userId: vote.userID,
            createdAt: UnixMillis.date(milliseconds: vote.createdAt), updatedAt: UnixMillis.date(milliseconds: vote.updatedAt)
        ))))
    }

    /// `test` arrives as a JSON boolean, or from one known client as the string "true"/"false".
    static func flag(_ value: Components.Schemas.NewProduct.TestPayload) throws -> Bool {
        switch value {
        case .case1(let flag): return flag
        case .case2(let text):
            switch text.lowercased() {
            case "true": return true
            case "false": return false
            default: throw APIError.badRequest("test must be true or false")
            }
        }
    }
}

/// What makes two `POST /products` requests the same request, for `Idempotency-Key` replays.
private struct ProductFingerprint: Encodable {
    let gtin: String
    let name: String
    let description: String?
    let test: Bool
    let img: String?
}

extension Components.Schemas.Product {
    init(_ record: ProductRecord, withScore: Bool) {
        self.init(id: record.id, name: record.name, description: record.description, barcode: record.barcode,
                  userId: record.userID, test: false, img: record.img, score: withScore ? Int(record.score) : nil,
                  createdAt: UnixMillis.date(milliseconds: record.createdAt),
                  updatedAt: UnixMillis.date(milliseconds: record.updatedAt))
    }
}
