import EventualAPI
import Crypto
import Foundation

/// The session token of the course contract: a look-up hands one out, and posting a product or
/// a vote for that barcode requires it.
///
/// It is signed, not stored: `base64url(userID|gtin|expiry).base64url(HMAC-SHA256)` with a key
/// kept in the database, so issuing one costs no write and any server process can check it.
struct SessionTokenSigner: Sendable {
    static let lifetime: TimeInterval = 3600

    struct Claims: Equatable {
        let userID: String
        let gtin: String
        let expiresAt: Int64
    }

    /// The 32-byte HMAC key. NB: kept as bytes because swift-crypto's SymmetricKey is not Sendable.
    let keyBytes: Data

    private var key: SymmetricKey { SymmetricKey(data: keyBytes) }

    func issue(userID: String, gtin: GTIN, now: Int64) -> String {
        let payload = Data("\(userID)|\(gtin.normalized)|\(now + Int64(Self.lifetime * 1000))".utf8)
        let signature = HMAC<SHA256>.authenticationCode(for: payload, using: key)
        return Base64URL.encode(payload) + "." + Base64URL.encode(Data(signature))
    }

    /// The claims of a genuine token, or a 403 saying why it is refused.
    func verify(_ token: String, userID: String, now: Int64) throws(APIError) -> Claims {
        let invalid = APIError.forbidden("session token is invalid: look the barcode up again to get a new one")
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = Base64URL.decode(parts[0]), let signature = Base64URL.decode(parts[1]),
              HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: payload, using: key)
        else { throw invalid }
        let fields = String(decoding: payload, as: UTF8.self).split(separator: "|")
        guard fields.count == 3, let expiresAt = Int64(fields[2]) else { throw invalid }
        let claims = Claims(userID: String(fields[0]), gtin: String(fields[1]), expiresAt: expiresAt)
        guard claims.expiresAt > now else {
            throw .forbidden("session token has expired: look the barcode up again to get a new one")
        }
        guard claims.userID == userID else { throw .forbidden("session token was issued to another user") }
        return claims
    }
}
