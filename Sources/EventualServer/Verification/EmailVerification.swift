import Crypto
import EventualAPI
import Foundation
import Logging
import SQLKit

/// Email verification: a 6-digit code mailed at registration (and on request), valid 10 minutes,
/// 5 tries, kept only as an HMAC under a server key. Accounts are shared by the apps; SpendiQ's
/// endpoints need a verified email, the course contract's endpoints do not.
struct EmailVerification: Sendable {
    static let lifetime: Int64 = 10 * 60 * 1000
    static let maxTries = 5
    /// At most one mail a minute per account.
    static let resendSpacing: Int64 = 60 * 1000

    let database: Database
    let key: Data
    let mailer: any MailSender
    let from: String
    let logger: Logger

    /// The outcome of a try, decided in a transaction that must commit even for a wrong code.
    enum Outcome: Sendable, Equatable {
        case verified, alreadyVerified, noAccount, noCode, tooManyTries, expired
        case wrong(triesLeft: Int)
    }

    /// A new code for `userID`, replacing any earlier one, mailed to `email`.
    func issue(userID: String, email: String, now: Int64) async throws {
        let code = Self.newCode()
        let hash = self.hash(code, userID: userID)
        try await database.withConnection { sql in
            try await sql.raw("""
                INSERT INTO email_verifications (user_id, code_hash, expires_at, failed_attempts, sent_at)
                VALUES (\(bind: userID), \(bind: hash), \(bind: now + Self.lifetime), 0, \(bind: now))
                ON CONFLICT (user_id) DO UPDATE SET code_hash = excluded.code_hash, expires_at = excluded.expires_at,
                    failed_attempts = 0, sent_at = excluded.sent_at
                """).run()
        }
        try await mailer.send(Mail(
            from: from, to: email, subject: "Your Eventual verification code: \(code)",
            body: """
                Your verification code is \(code).

                Type it within 10 minutes (spendiq verify \(code)). If you did not register, ignore this mail.
                """))
    }

    /// Mails the first code of a new account. A failure is logged (its kind, never the code) and
    /// does not undo the registration: the person asks for a new code.
    func issueAfterRegistration(userID: String, email: String, now: Int64) async {
        do {
            try await issue(userID: userID, email: email, now: now)
        } catch {
            logger.warning("verification mail not sent", metadata: ["error": "\(LogSafe.describe(error))"])
        }
    }

    /// Mails a new code if `email` belongs to an unverified account whose last mail is at least a minute old.
    func resend(email: String, now: Int64) async throws {
        let target: (String, String)? = try await database.withConnection { sql in
            guard let user = try await sql.select().columns("id", "email", "email_verified_at").from("users")
                .where("email_key", .equal, AccountRules.key(email)).first(),
                try user.decode(column: "email_verified_at", as: Int64?.self) == nil else { return nil }
            let id = try user.decode(column: "id", as: String.self)
            if let last = try await sql.select().column("sent_at").from("email_verifications").where("user_id", .equal, id).first(),
               try last.decode(column: "sent_at", as: Int64.self) > now - Self.resendSpacing {
                return nil
            }
            return (id, try user.decode(column: "email", as: String.self))
        }
        guard let (id, address) = target else { return }
        try await issue(userID: id, email: address, now: now)
    }

    /// Checks a code typed by the person who registered `email`.
    func verify(email: String, code: String, now: Int64) async throws -> Outcome {
        try await database.transaction { sql in
            guard let user = try await sql.select().columns("id", "email_verified_at").from("users")
                .where("email_key", .equal, AccountRules.key(email)).first() else { return .noAccount }
            if try user.decode(column: "email_verified_at", as: Int64?.self) != nil { return .alreadyVerified }
            let id = try user.decode(column: "id", as: String.self)
            guard let row = try await sql.select().columns("code_hash", "expires_at", "failed_attempts").from("email_verifications")
                .where("user_id", .equal, id).first() else { return .noCode }
            let failed = try row.decode(column: "failed_attempts", as: Int.self)
            guard failed < Self.maxTries else { return .tooManyTries }
            guard try row.decode(column: "expires_at", as: Int64.self) > now else { return .expired }
            let stored = try row.decode(column: "code_hash", as: String.self)
            guard Self.constantTimeEqual(stored, self.hash(code, userID: id)) else {
                try await sql.update("email_verifications").set("failed_attempts", to: failed + 1).where("user_id", .equal, id).run()
                return .wrong(triesLeft: Self.maxTries - failed - 1)
            }
            try await sql.update("users").set("email_verified_at", to: now).where("id", .equal, id).run()
            try await sql.delete(from: "email_verifications").where("user_id", .equal, id).run()
            return .verified
        }
    }

    func hash(_ code: String, userID: String) -> String {
        Hex.encode(HMAC<SHA256>.authenticationCode(for: Data("email-code:\(userID):\(code)".utf8), using: SymmetricKey(data: key)))
    }

    static func newCode() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = Int.random(in: 0..<1_000_000, using: &generator)
        let digits = String(value)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    private static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

extension EmailVerification.Outcome {
    /// The answer for people; nil when the email is verified.
    var refusal: APIError? {
        switch self {
        case .verified, .alreadyVerified: return nil
        // NB: an unknown email reads like a wrong code: nobody learns who has an account.
        case .noAccount: return .badRequest("Wrong code")
        case .noCode: return .badRequest("No code is waiting for this email: ask for a new one")
        case .tooManyTries: return .badRequest("Too many wrong codes: ask for a new one")
        case .expired: return .badRequest("The code expired (codes last 10 minutes): ask for a new one")
        case .wrong(let left):
            return .badRequest(left > 0 ? "Wrong code: \(left) \(left == 1 ? "try" : "tries") left" : "Wrong code, and no tries left: ask for a new one")
        }
    }
}
