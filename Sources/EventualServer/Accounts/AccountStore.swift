import EventualStorage
import Foundation
import SQLKit

/// A row of `users`.
struct UserRecord: Sendable, Equatable {
    let id: String
    let username: String
    let email: String
    let passwordHash: String
    let createdAt: Int64
    let updatedAt: Int64

    init(id: String, username: String, email: String, passwordHash: String, createdAt: Int64, updatedAt: Int64) {
        self.id = id
        self.username = username
        self.email = email
        self.passwordHash = passwordHash
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    init(row: any SQLRow) throws {
        id = try row.decode(column: "id", as: String.self)
        username = try row.decode(column: "username", as: String.self)
        email = try row.decode(column: "email", as: String.self)
        passwordHash = try row.decode(column: "password_hash", as: String.self)
        createdAt = try row.decode(column: "created_at", as: Int64.self)
        updatedAt = try row.decode(column: "updated_at", as: Int64.self)
    }

    static let columns = ["id", "username", "email", "password_hash", "created_at", "updated_at"]
}

/// A row of `access_tokens`, as the authentication check reads it.
struct AccessTokenRecord: Sendable, Equatable {
    let userID: String
    let expiresAt: Int64
    let revokedAt: Int64?

    /// NB: the same rule as `goodHashes(among:at:on:)`'s query, for a record already read.
    func isValid(at now: Int64) -> Bool { revokedAt == nil && expiresAt > now }

    /// The hashes among `hashes` whose token `isValid(at: now)`, in one statement.
    static func goodHashes(among hashes: [String], at now: Int64, on sql: any SQLDatabase) -> SQLSelectBuilder {
        sql.select().column("token_hash").from("access_tokens")
            .where("token_hash", .in, hashes)
            .where("revoked_at", .is, SQLLiteral.null)
            .where("expires_at", .greaterThan, now)
    }

    /// The query behind every authenticated request, written once for both databases and for
    /// the SQLite fast path.
    static func query(tokenHash: String, on sql: any SQLDatabase) -> SQLSelectBuilder {
        sql.select().columns("user_id", "expires_at", "revoked_at").from("access_tokens")
            .where("token_hash", .equal, tokenHash)
    }

    init(userID: String, expiresAt: Int64, revokedAt: Int64?) {
        self.userID = userID
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
    }

    init(row: any SQLRow) throws {
        userID = try row.decode(column: "user_id", as: String.self)
        expiresAt = try row.decode(column: "expires_at", as: Int64.self)
        revokedAt = try row.decode(column: "revoked_at", as: Int64?.self)
    }
}

/// Users and their access tokens.
struct AccountStore: Sendable {
    let database: Database

    /// Creates a user in the caller's transaction, or says which of username and email is taken.
    func register(_ user: UserRecord, on sql: any SQLDatabase) async throws {
        if let conflict = try await conflict(for: user, on: sql) { throw conflict }
        try await sql.insert(into: "users")
            .columns("id", "username", "username_key", "email", "email_key", "password_hash", "created_at", "updated_at")
            .values(
                SQLBind(user.id), SQLBind(user.username), SQLBind(AccountRules.key(user.username)),
                SQLBind(user.email), SQLBind(AccountRules.key(user.email)), SQLBind(user.passwordHash),
                SQLBind(user.createdAt), SQLBind(user.updatedAt)
            )
            .run()
    }

    /// Why a registration of `user` is refused, if its email or username is taken.
    func conflict(for user: UserRecord, on sql: any SQLDatabase) async throws -> Refusal? {
        if try await sql.select().column("id").from("users")
            .where("email_key", .equal, AccountRules.key(user.email)).first() != nil {
            return Refusal.alreadyTaken("email is already registered")
        }
        if try await sql.select().column("id").from("users")
            .where("username_key", .equal, AccountRules.key(user.username)).first() != nil {
            return Refusal.alreadyTaken("username is already taken")
        }
        return nil
    }

    /// Like `conflict(for:on:)` on a connection of its own, after a concurrent insert won.
    func conflict(for user: UserRecord) async throws -> Refusal? {
        try await database.withConnection { sql in try await conflict(for: user, on: sql) }
    }

    func user(email: String) async throws -> UserRecord? {
        try await database.withConnection { sql in
            try await sql.select().columns(UserRecord.columns.map { SQLColumn($0) }).from("users")
                .where("email_key", .equal, AccountRules.key(email)).first()
                .map(UserRecord.init(row:))
        }
    }

    /// The id of whoever is called `username`, if anyone is.
    func userID(username: String) async throws -> String? {
        try await database.withConnection { sql in
            try await sql.select().columns("id").from("users").where("username_key", .equal, AccountRules.key(username)).first()?
                .decode(column: "id", as: String.self)
        }
    }

    func user(id: String) async throws -> UserRecord? {
        try await database.withConnection { sql in
            try await sql.select().columns(UserRecord.columns.map { SQLColumn($0) }).from("users")
                .where("id", .equal, id).first()
                .map(UserRecord.init(row:))
        }
    }

    /// Stores a new access token (by its hash) for a user.
    func saveToken(hash: String, userID: String, now: Int64, expiresAt: Int64) async throws {
        try await database.withConnection { sql in
            try await sql.insert(into: "access_tokens")
                .columns("token_hash", "user_id", "created_at", "expires_at")
                .values(SQLBind(hash), SQLBind(userID), SQLBind(now), SQLBind(expiresAt))
                .run()
        }
    }

    func token(hash: String) async throws -> AccessTokenRecord? {
        try await database.withConnection { sql in
            try await AccessTokenRecord.query(tokenHash: hash, on: sql).first().map(AccessTokenRecord.init(row:))
        }
    }

    /// Moves a good token's expiry to `expiresAt`, when that is later (`AccessToken.renewedAfter`).
    func renewToken(hash: String, now: Int64, expiresAt: Int64) async throws {
        try await database.withConnection { sql in
            try await sql.update("access_tokens").set("expires_at", to: expiresAt)
                .where("token_hash", .equal, hash).where("revoked_at", .is, SQLLiteral.null)
                .where("expires_at", .greaterThan, now).where("expires_at", .lessThan, expiresAt)
                .run()
        }
    }

    func revokeToken(hash: String, at now: Int64) async throws {
        try await database.withConnection { sql in
            try await sql.update("access_tokens").set("revoked_at", to: now)
                .where("token_hash", .equal, hash).where("revoked_at", .is, SQLLiteral.null)
                .run()
        }
    }
}
