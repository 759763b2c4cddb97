import EventualAPI
import Crypto
import EventualStorage
import Foundation
import SQLKit

/// At most `limit` events in any `window`.
public struct ThrottleRule: Sendable, Equatable {
    public var limit: Int
    public var window: Duration

    public init(limit: Int, window: Duration) {
        self.limit = limit
        self.window = window
    }
}

/// The limits on guessing passwords and creating accounts.
public struct ThrottleLimits: Sendable, Equatable {
    /// Failed logins for one account from one address; past it that pair is refused, right password or not.
    public var failedLoginsPerAccountAndAddress = ThrottleRule(limit: 10, window: .seconds(15 * 60))
    /// Failed logins from one address across all accounts (password spraying).
    public var failedLoginsPerAddress = ThrottleRule(limit: 100, window: .seconds(15 * 60))
    /// Accounts created from one address (a class behind one NAT fits under the default).
    public var registrationsPerAddress = ThrottleRule(limit: 30, window: .seconds(3600))
    /// Failed email verifications for one email over a day, whatever the codes mailed meanwhile:
    /// with 6 digits, 20 guesses a day leave a guesser one chance in 50,000 a day.
    public var failedVerificationsPerEmail = ThrottleRule(limit: 20, window: .seconds(24 * 3600))
    /// Failed email verifications from one address across all emails (someone probing who has an account).
    public var failedVerificationsPerAddress = ThrottleRule(limit: 30, window: .seconds(3600))
    /// Verification codes mailed to one account over a day (each resend mails its owner).
    public var verificationMailsPerAccount = ThrottleRule(limit: 10, window: .seconds(24 * 3600))

    public init() {}
}

/// Counts failed logins and registrations in the database, so that every server process on it
/// sees the same counts, and refuses with 429 and `Retry-After` past a limit.
///
/// Buckets are keyed by an HMAC of the account and address under a server key: the table holds
/// no email address or IP address in clear. Whether an account exists plays no part: an unknown
/// email is counted and refused like a known one.
struct Throttle: Sendable {
    let database: Database
    let limits: ThrottleLimits
    let keyBytes: Data

    /// What a login attempt found before checking the password.
    struct LoginStanding: Sendable {
        let accountBucket: String
        let addressBucket: String
        /// Failures of this account from this address in the window (cleared by a success).
        let recentFailures: Int
    }

    /// Refuses (429) a login for `email` from `address` past a limit; otherwise says where it stands.
    func checkLogin(email: String, address: String, now: Int64) async throws -> LoginStanding {
        let accountBucket = bucket("login", AccountRules.key(email), address)
        let addressBucket = bucket("login-address", address)
        let pair = limits.failedLoginsPerAccountAndAddress, wide = limits.failedLoginsPerAddress
        let counts: ((events: Int, oldest: Int64), (events: Int, oldest: Int64)) = try await database.withConnection { sql in
            (try await count(accountBucket, within: pair.window, now: now, on: sql),
             try await count(addressBucket, within: wide.window, now: now, on: sql))
        }
        let rules = Self.tellsClientsApart(address) ? [(counts.0, pair), (counts.1, wide)] : [(counts.0, pair)]
        for (count, rule) in rules where count.events >= rule.limit {
            let retryAfter = Int((count.oldest + rule.window.milliseconds - now + 999) / 1000)
            throw APIError.tooManyRequests(
                "Too many failed sign-ins; try again in \(Self.describe(seconds: retryAfter))", retryAfter: retryAfter)
        }
        return LoginStanding(accountBucket: accountBucket, addressBucket: addressBucket, recentFailures: counts.0.events)
    }

    func recordLoginFailure(_ standing: LoginStanding, now: Int64) async throws {
        try await database.withConnection { sql in
            try await sql.insert(into: "throttle_events").columns("bucket", "at")
                .values(SQLBind(standing.accountBucket), SQLBind(now))
                .values(SQLBind(standing.addressBucket), SQLBind(now))
                .run()
        }
    }

    /// Forgets this account's failures from this address after a correct password.
    func recordLoginSuccess(_ standing: LoginStanding) async throws {
        guard standing.recentFailures > 0 else { return }
        try await database.withConnection { sql in
            try await sql.delete(from: "throttle_events").where("bucket", .equal, standing.accountBucket).run()
        }
    }

    /// Refuses (429) a registration from `address` past the limit.
    func checkRegistration(address: String, now: Int64) async throws {
        guard Self.tellsClientsApart(address) else { return }
        let rule = limits.registrationsPerAddress
        let registrations = bucket("register", address)
        let recent: (events: Int, oldest: Int64) = try await database.withConnection { sql in
            try await count(registrations, within: rule.window, now: now, on: sql)
        }
        if recent.events >= rule.limit {
            let retryAfter = Int((recent.oldest + rule.window.milliseconds - now + 999) / 1000)
            throw APIError.tooManyRequests(
                "Too many accounts created from this address; try again in \(Self.describe(seconds: retryAfter))",
                retryAfter: retryAfter)
        }
    }

    /// Counts a registration, in the transaction that creates the account.
    func recordRegistration(address: String, now: Int64, on sql: any SQLDatabase) async throws {
        try await sql.insert(into: "throttle_events").columns("bucket", "at")
            .values(SQLBind(bucket("register", address)), SQLBind(now)).run()
    }

    /// Refuses (429) a verification try for `email` from `address` past a limit. Whether the
    /// email has an account plays no part, so the refusal tells nobody who has one.
    func checkVerification(email: String, address: String, now: Int64) async throws {
        let perEmail = limits.failedVerificationsPerEmail, perAddress = limits.failedVerificationsPerAddress
        let emailBucket = bucket("verify", AccountRules.key(email)), addressBucket = bucket("verify-address", address)
        let counts: ((events: Int, oldest: Int64), (events: Int, oldest: Int64)) = try await database.withConnection { sql in
            (try await count(emailBucket, within: perEmail.window, now: now, on: sql),
             try await count(addressBucket, within: perAddress.window, now: now, on: sql))
        }
        let rules = Self.tellsClientsApart(address) ? [(counts.0, perEmail), (counts.1, perAddress)] : [(counts.0, perEmail)]
        for (count, rule) in rules where count.events >= rule.limit {
            let retryAfter = Int((count.oldest + rule.window.milliseconds - now + 999) / 1000)
            throw APIError.tooManyRequests(
                "Too many wrong verification codes; try again in \(Self.describe(seconds: retryAfter))", retryAfter: retryAfter)
        }
    }

    /// Counts a failed verification of `email` from `address`, in the transaction that decided it.
    func recordVerificationFailure(email: String, address: String, now: Int64, on sql: any SQLDatabase) async throws {
        try await sql.insert(into: "throttle_events").columns("bucket", "at")
            .values(SQLBind(bucket("verify", AccountRules.key(email))), SQLBind(now))
            .values(SQLBind(bucket("verify-address", address)), SQLBind(now))
            .run()
    }

    /// Whether another verification code may be mailed to `userID` now; if so, counts it.
    func allowVerificationMail(userID: String, now: Int64, on sql: any SQLDatabase) async throws -> Bool {
        let rule = limits.verificationMailsPerAccount
        let mails = bucket("verify-mail", userID)
        guard try await count(mails, within: rule.window, now: now, on: sql).events < rule.limit else { return false }
        try await sql.insert(into: "throttle_events").columns("bucket", "at").values(SQLBind(mails), SQLBind(now)).run()
        return true
    }

    /// Forgets events older than every window.
    func purge(now: Int64) async throws {
        let longest = [limits.failedLoginsPerAccountAndAddress, limits.failedLoginsPerAddress, limits.registrationsPerAddress,
                       limits.failedVerificationsPerEmail, limits.failedVerificationsPerAddress, limits.verificationMailsPerAccount]
            .map { $0.window.milliseconds }.max() ?? 0
        try await database.withConnection { sql in
            try await sql.delete(from: "throttle_events").where("at", .lessThanOrEqual, now - longest).run()
        }
    }

    /// Whether requests from `address` come from one client. NB: from loopback (a reverse proxy on
    /// this host, without `--trust-forwarded-for`) or from nowhere known, every client shares the
    /// address, and a limit per address would lock the whole service out at once; only the limit
    /// per account and address applies then.
    static func tellsClientsApart(_ address: String) -> Bool {
        !(address == "unknown" || address == "::1" || address.hasPrefix("127.") || address.hasPrefix("::ffff:127."))
    }

    private func count(_ bucket: String, within window: Duration, now: Int64, on sql: any SQLDatabase) async throws
        -> (events: Int, oldest: Int64) {
        guard let row = try await sql.select()
            .column(SQLFunction("COUNT", args: SQLLiteral.all), as: "events")
            .column(SQLFunction("MIN", args: SQLColumn("at")), as: "oldest")
            .from("throttle_events")
            .where("bucket", .equal, bucket).where("at", .greaterThan, now - window.milliseconds)
            .first()
        else { return (0, now) }
        return (try row.decode(column: "events", as: Int.self), try row.decode(column: "oldest", as: Int64?.self) ?? now)
    }

    private func bucket(_ parts: String...) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(parts.joined(separator: "\u{1F}").utf8), using: SymmetricKey(data: keyBytes))
        return Hex.encode(mac)
    }

    static func describe(seconds: Int) -> String {
        seconds < 90 ? "\(seconds) s" : "\((seconds + 59) / 60) min"
    }
}
