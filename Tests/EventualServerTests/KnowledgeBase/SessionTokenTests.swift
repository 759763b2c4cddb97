import EventualAPI
import Foundation
import Testing
@testable import EventualServer

@Suite("Session tokens: signed, bound to user and barcode, expiring")
struct SessionTokenTests {
    let signer = SessionTokenSigner(keyBytes: Data((0..<32).map { UInt8($0) }))
    let gtin = try! GTIN(validating: "3017620422003")

    @Test func issuedTokenVerifiesForItsUserWithinAnHour() throws {
        let now = UnixMillis.now()
        let token = signer.issue(userID: "u1", gtin: gtin, now: now)
        let claims = try signer.verify(token, userID: "u1", now: now + 59 * 60 * 1000)
        #expect(claims.gtin == gtin.normalized)
        #expect(claims.userID == "u1")
    }

    @Test func expiredTokenIsRefused() {
        let now = UnixMillis.now()
        let token = signer.issue(userID: "u1", gtin: gtin, now: now)
        #expect(throws: APIError.forbidden("session token has expired: look the barcode up again to get a new one")) {
            try signer.verify(token, userID: "u1", now: now + 3601 * 1000)
        }
    }

    @Test func anotherUsersTokenIsRefused() {
        let token = signer.issue(userID: "u1", gtin: gtin, now: UnixMillis.now())
        #expect(throws: APIError.forbidden("session token was issued to another user")) {
            try signer.verify(token, userID: "u2", now: UnixMillis.now())
        }
    }

    @Test func tokenSignedWithAnotherKeyIsRefused() {
        let other = SessionTokenSigner(keyBytes: Data(repeating: 7, count: 32))
        let token = other.issue(userID: "u1", gtin: gtin, now: UnixMillis.now())
        #expect(throws: APIError.self) { try signer.verify(token, userID: "u1", now: UnixMillis.now()) }
    }

    @Test func forgedClaimsAreRefused() throws {
        let token = signer.issue(userID: "u1", gtin: gtin, now: UnixMillis.now())
        let signature = token.split(separator: ".")[1]
        let forged = Base64URL.encode(Data("u2|03017620422003|99999999999999".utf8)) + "." + signature
        #expect(throws: APIError.self) { try signer.verify(forged, userID: "u2", now: UnixMillis.now()) }
    }
}
