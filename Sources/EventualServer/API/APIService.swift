import EventualAPI
import Foundation
import Logging

/// The handlers of the wire contract (`openapi.yaml`), one extension per feature:
/// - accounts (register, log in and out, `/users/me`): `Accounts/AccountsAPI.swift`, admins in `Accounts/Roles.swift`;
/// - the knowledge base (barcode look-up, products, votes): `KnowledgeBase/KnowledgeBaseAPI.swift` (the plain
///   look-up is answered beside the router by `KnowledgeBase/LookupFastPath.swift`);
/// - record sync (push, pull): `Sync/SyncAPI.swift`;
/// - recycling for SustainU (points and visits, scans, score, scoreboard, tips, packaging):
///   `Recycling/RecyclingPointsAPI.swift`, `Recycling/RecyclingScansAPI.swift`, `Recycling/RecyclingScoreAPI.swift`;
/// - spending for SpendiQ (email verification, account, position, offers, insights): `Spending/SpendingAPI.swift`;
/// - usage analytics (events, questions): `Analytics/AnalyticsAPI.swift`;
/// - attachments (begin, status, append a chunk, download): `Attachments/AttachmentsAPI.swift`;
/// - the live channel beside the contract, a WebSocket (`Live/LiveRoute.swift`), signalled after each push;
/// - the apps served (`GET /v1/apps/{id}`): `Apps/AppsAPI.swift`;
/// - `/health` here. Beside the contract: the admin dashboard (`Dashboard/`) and `/metrics` (`Metrics/`).
/// A store's refusal (`Refusal`) becomes a status in `HTTP/ErrorMapping.swift`.
struct APIService: APIProtocol {
    let accounts: AccountStore
    let products: ProductStore
    let idempotency: Idempotency
    let sync: SyncStore
    let pushValidation: PushValidation
    let lookupReads: BarcodeLookupReads
    let passwords: PasswordHasher
    let sessionTokens: SessionTokenSigner
    let throttle: Throttle
    let quotas: Quotas
    let metrics: ServerMetrics
    /// SustainU: recycling points, packaging, scans, score and tips (Recycling/).
    let recycling: Recycling
    let verification: EmailVerification
    let spending: SpendingStore
    /// Blobs attached to records, uploaded in chunks (Attachments/).
    let attachments: AttachmentStore
    /// Signals to devices' live channels that a pull is worth making now (Live/).
    let live: LiveBus
    /// The apps this server serves, as deployed to its database (Apps/).
    let catalog: AppCatalog

    func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        .ok(.init(body: .json(.init(status: "ok"))))
    }

    static let missingToken = APIError.unauthorized("Missing access token: send 'Authorization: Bearer <token>' from POST /auth/login")
    static let invalidToken = APIError.unauthorized("Access token is invalid, expired or revoked: log in again")

    /// The signed-in user's id, from the request's bearer token, or a 401.
    func authenticatedUserID() async throws -> String {
        guard let token = RequestScope.current?.bearerToken else { throw Self.missingToken }
        let hash = AccessToken.hash(token), now = UnixMillis.now()
        guard let record = try await lookupReads.token(hash: hash), record.isValid(at: now) else {
            throw Self.invalidToken
        }
        let lifetime = Int64(AccessToken.lifetime * 1000)
        if record.expiresAt < now + lifetime - Int64(AccessToken.renewedAfter * 1000) {
            // NB: a renewal that fails costs the person nothing now: the token is good, and the next request renews it.
            try? await accounts.renewToken(hash: hash, now: now, expiresAt: now + lifetime)
        }
        return record.userID
    }
}
