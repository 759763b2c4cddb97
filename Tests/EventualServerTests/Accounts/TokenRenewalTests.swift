import EventualAPI
import EventualStorage
import Foundation
import Logging
import SQLKit
import Testing
@testable import EventualServer

/// An access token in use slides: a person who syncs every day never types their password again,
/// while one unused for its lifetime, or revoked, stays out.
@Suite("Access tokens: a sliding window", .timeLimit(.minutes(2)))
struct TokenRenewalTests {
    @Test(arguments: Backend.available)
    func aTokenInUseIsRenewedToAWholeLifetime(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            // Given a token that expires in a day
            let alice = try await api.signUp("alice")
            let inADay = UnixMillis.now() + 86_400_000
            try await Self.setExpiry(of: alice, to: inADay, at: location)
            // When it is used
            #expect(try await api.send(.get, "/users/me", headers: alice.bearer).status == .ok)
            // Then it expires a whole lifetime from now
            let expiry = try #require(try await Self.expiry(of: alice, at: location))
            let lifetime = Int64(AccessToken.lifetime * 1000)
            #expect(expiry > UnixMillis.now() + lifetime - 60_000 && expiry <= UnixMillis.now() + lifetime)
        }
    }

    @Test(arguments: Backend.available)
    func anExpiredOrRevokedTokenIsNeverRenewed(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            // Given one token expired a second ago and another revoked
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            try await Self.setExpiry(of: alice, to: UnixMillis.now() - 1000, at: location)
            #expect(try await api.send(.post, "/auth/logout", headers: bob.bearer).status.code < 300)
            // When they are used, they are refused, and stay as they were
            #expect(try await api.send(.get, "/users/me", headers: alice.bearer).status == .unauthorized)
            #expect(try await api.send(.get, "/users/me", headers: bob.bearer).status == .unauthorized)
            #expect(try #require(try await Self.expiry(of: alice, at: location)) < UnixMillis.now())
            #expect(try await api.send(.get, "/users/me", headers: alice.bearer).status == .unauthorized)
        }
    }

    @Test(arguments: Backend.available)
    func aTokenRenewedWithinTheHourIsNotWrittenAgain(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let alice = try await api.signUp("alice")
            let fresh = try #require(try await Self.expiry(of: alice, at: location))
            for _ in 0..<3 { #expect(try await api.send(.get, "/users/me", headers: alice.bearer).status == .ok) }
            #expect(try await Self.expiry(of: alice, at: location) == fresh)
        }
    }

    private static func setExpiry(of account: Account, to millis: Int64, at location: DatabaseLocation) async throws {
        let database = try await Database.open(location, logger: Logger(label: "test"))
        do {
            try await database.withConnection { sql in
                try await sql.update("access_tokens").set("expires_at", to: millis)
                    .where("token_hash", .equal, AccessToken.hash(account.accessToken)).run()
            }
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }

    private static func expiry(of account: Account, at location: DatabaseLocation) async throws -> Int64? {
        let database = try await Database.open(location, logger: Logger(label: "test"))
        let expiry = try? await database.withConnection { sql in
            try await sql.select().column("expires_at").from("access_tokens")
                .where("token_hash", .equal, AccessToken.hash(account.accessToken)).first()?.decode(column: "expires_at", as: Int64.self)
        }
        await database.close()
        return expiry
    }
}
