import EventualAPI
import Foundation

/// SpendiQ's endpoints (`/v1/spending/...`) and the shared email verification (`/v1/account/verification`).
extension APIService {
    static let verifyFirst = APIError.forbidden("verify your email first: type the code we mailed you (spendiq verify CODE)")

    /// The signed-in user's id if their email is verified; 401 without a valid token, 403 before verification.
    func authenticatedVerifiedUserID() async throws -> String {
        let userID = try await authenticatedUserID()
        guard let standing = try await spending.standing(userID: userID) else { throw APIError.unauthorized() }
        guard standing.verifiedAt != nil else { throw Self.verifyFirst }
        return userID
    }

    func verifyEmail(_ input: Operations.VerifyEmail.Input) async throws -> Operations.VerifyEmail.Output {
        guard case .json(let body) = input.body else { throw APIError.badRequest("expected a JSON body") }
        try TextRules.check(body.email, field: "email")
        guard body.code.utf8.count == 6, body.code.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw APIError.badRequest("code must be the 6 digits of the mail")
        }
        if let refusal = try await verification.verify(email: body.email, code: body.code, now: UnixMillis.now()).refusal { throw refusal }
        return .noContent(.init())
    }

    func sendVerificationCode(_ input: Operations.SendVerificationCode.Input) async throws -> Operations.SendVerificationCode.Output {
        guard case .json(let body) = input.body else { throw APIError.badRequest("expected a JSON body") }
        try TextRules.check(body.email, field: "email")
        guard body.email.count <= 254 else { throw APIError.badRequest("email must be at most 254 characters long") }
        try await verification.resend(email: body.email, now: UnixMillis.now())
        return .accepted(.init())
    }

    func getSpendingAccount(_ input: Operations.GetSpendingAccount.Input) async throws -> Operations.GetSpendingAccount.Output {
        let userID = try await authenticatedVerifiedUserID()
        let standing = try await spending.standing(userID: userID)
        return .ok(.init(body: .json(.init(userId: userID, verified: true, lastSeenAt: standing?.lastSeenAt))))
    }

    func postLastSeen(_ input: Operations.PostLastSeen.Input) async throws -> Operations.PostLastSeen.Output {
        guard case .json(let body) = input.body else { throw APIError.badRequest("expected a JSON body") }
        let userID = try await authenticatedVerifiedUserID()
        try Self.checkTime(body.at, field: "at")
        try await spending.recordLastSeen(userID: userID, at: clamped(body.at))
        return .noContent(.init())
    }

    func postLocation(_ input: Operations.PostLocation.Input) async throws -> Operations.PostLocation.Output {
        guard case .json(let body) = input.body else { throw APIError.badRequest("expected a JSON body") }
        let userID = try await authenticatedVerifiedUserID()
        guard (-90...90).contains(body.latitude), (-180...180).contains(body.longitude) else {
            throw APIError.badRequest("latitude must be from -90 to 90 and longitude from -180 to 180")
        }
        try Self.checkTime(body.at, field: "at")
        try await spending.recordLocation(userID: userID, latitude: body.latitude, longitude: body.longitude, at: clamped(body.at))
        return .noContent(.init())
    }

    func getOffers(_ input: Operations.GetOffers.Input) async throws -> Operations.GetOffers.Output {
        let (latitude, longitude) = try Self.point(input.query.near)
        let radius = input.query.radius ?? 1000
        guard (1...20_000).contains(radius) else { throw APIError.badRequest("radius must be from 1 to 20000 metres, not \(radius)") }
        let limit = input.query.limit ?? SpendingStore.maxOffers
        guard (1...SpendingStore.maxOffersLimit).contains(limit) else {
            throw APIError.badRequest("limit must be from 1 to \(SpendingStore.maxOffersLimit), not \(limit)")
        }
        _ = try await authenticatedVerifiedUserID()
        let found = try await spending.offers(latitude: latitude, longitude: longitude, radius: Double(radius), limit: limit, now: UnixMillis.now())
        return .ok(.init(body: .json(.init(offers: found.offers, total: found.total))))
    }

    func postOffer(_ input: Operations.PostOffer.Input) async throws -> Operations.PostOffer.Output {
        guard case .json(let body) = input.body else { throw APIError.badRequest("expected a JSON body") }
        let adminID = try await authenticatedAdminID()
        for (field, value) in [("shopId", body.shopId), ("title", body.title), ("category", body.category)] {
            try TextRules.check(value, field: field)
            guard !TextRules.trimmingSpaces(value).isEmpty else { throw APIError.badRequest("\(field) must not be empty") }
        }
        guard body.title.count <= 200, body.category.count <= 100, body.shopId.count <= 128 else {
            throw APIError.badRequest("title is at most 200 characters, category 100, shopId 128")
        }
        if let description = body.description {
            try TextRules.check(description, field: "description", .multiLine)
            guard description.count <= 2000 else { throw APIError.badRequest("description must be at most 2000 characters long") }
        }
        if let discount = body.discountPercent, !(1...100).contains(discount) {
            throw APIError.badRequest("discountPercent must be from 1 to 100")
        }
        if let until = body.validUntil { try Self.checkTime(until, field: "validUntil") }
        guard let offer = try await spending.addOffer(body, by: adminID, now: UnixMillis.now()) else {
            throw APIError.notFound("No shop \(body.shopId): shops come from eventual-server import-shops")
        }
        return .created(.init(body: .json(offer)))
    }

    func postOfferView(_ input: Operations.PostOfferView.Input) async throws -> Operations.PostOfferView.Output {
        let userID = try await authenticatedVerifiedUserID()
        try TextRules.check(input.path.id, field: "id")
        let key = input.headers.idempotencyKey ?? UUID().uuidString
        guard (1...255).contains(key.unicodeScalars.count) else { throw APIError.badRequest("Idempotency-Key must be 1 to 255 characters long") }
        try TextRules.check(key, field: "Idempotency-Key")
        guard try await spending.countView(offerID: input.path.id, userID: userID, key: key, now: UnixMillis.now()) else {
            throw APIError.notFound("No offer \(input.path.id.prefix(128))")
        }
        return .noContent(.init())
    }

    func getInsights(_ input: Operations.GetInsights.Input) async throws -> Operations.GetInsights.Output {
        let userID = try await authenticatedVerifiedUserID()
        let now = UnixMillis.now()
        let findings = Insights.find(try await spending.transactions(userID: userID), now: now)
        let insights = findings.map { finding in
            Components.Schemas.Insight(kind: .init(rawValue: finding.kind.rawValue)!, message: finding.message,
                                       transactionId: finding.transactionId, category: finding.category,
                                       currency: finding.currency, at: finding.at)
        }
        return .ok(.init(body: .json(.init(computedAt: now, insights: insights))))
    }

    /// A device's time, or the server's when the device's clock is ahead by more than the drift
    /// sync allows: a fast clock's "last seen" would otherwise stay in the future and hide every
    /// true one after it.
    func clamped(_ at: Int64) -> Int64 {
        let now = UnixMillis.now()
        return at > now + pushValidation.maxClockDrift.milliseconds ? now : at
    }

    /// A Unix-millisecond time a person can mean: not before 1970, not past year 5000.
    static func checkTime(_ millis: Int64, field: String) throws(APIError) {
        guard (0...95_617_584_000_000).contains(millis) else { throw .badRequest("\(field) must be Unix milliseconds from 0 to 95617584000000") }
    }

    /// `LAT,LON` in degrees.
    static func point(_ text: String) throws(APIError) -> (Double, Double) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let latitude = Double(parts[0]), let longitude = Double(parts[1]),
              latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw .badRequest("near must be LATITUDE,LONGITUDE in degrees, e.g. 43.7384,7.4246, not '\(text.prefix(64))'")
        }
        return (latitude, longitude)
    }
}
