import Crypto
import EventualAPI
import EventualStorage
import Foundation
import Logging
import SQLKit

/// Email verification: a 6-digit code mailed at registration (and on request), valid 10 minutes,
/// 5 tries, kept only as an HMAC under a server key. Accounts are shared by the apps; SpendiQ's
/// endpoints need a verified email, the course contract's endpoints do not.
///
/// Guessing is bounded whatever the resends: failures per email over a day and per address over
/// an hour (`Throttle`), and mails per account over a day. Every failure answers alike, so a
/// try tells nobody who has an account or whether it is verified.
struct EmailVerification: Sendable {
    static let lifetime: Int64 = 10 * 60 * 1000
    static let maxTries = 5
    /// At most one mail a minute per account.
    static let resendSpacing: Int64 = 60 * 1000

    let database: Database
    let key: Data
    let mailer: any MailSender
    let from: String
    let throttle: Throttle
    let logger: Logger

    /// The outcome of a try, decided in a transaction that must commit even for a wrong code.
    enum Outcome: Sendable, Equatable {
        case verified, alreadyVerified, noAccount, noCode, tooManyTries, expired
        case wrong(triesLeft: Int)
    }

    /// A new code for `userID`, replacing any earlier one, mailed to `email` in the words of `app`
    /// (nil: words that fit every app). Nothing is mailed past the day's mails for the account.
    func issue(userID: String, email: String, app: EventualApp? = nil, now: Int64) async throws {
        let code = Self.newCode()
        let hash = self.hash(code, userID: userID)
        let allowed = try await database.transaction { [throttle] sql in
            guard try await throttle.allowVerificationMail(userID: userID, now: now, on: sql) else { return false }
            try await sql.raw("""
                INSERT INTO email_verifications (user_id, code_hash, expires_at, failed_attempts, sent_at)
                VALUES (\(bind: userID), \(bind: hash), \(bind: now + Self.lifetime), 0, \(bind: now))
                ON CONFLICT (user_id) DO UPDATE SET code_hash = excluded.code_hash, expires_at = excluded.expires_at,
                    failed_attempts = 0, sent_at = excluded.sent_at
                """).run()
            return true
        }
        guard allowed else {
            logger.notice("verification mail not sent: the account's mails for the day are used up")
            return
        }
        try await mailer.send(Self.mail(code: code, app: app, from: from, to: email))
    }

    /// The mail carrying `code`: it names the app that asked, or no app at all.
    static func mail(code: String, app: EventualApp?, from: String, to email: String) -> Mail {
        let registered = app
        let name = registered?.title ?? "Eventual"
        let howTo = registered.map { app in
            "Type it in \(app.title) within 10 minutes" + (app.verifyCommand.map { " (\($0) \(code))." } ?? ".")
        } ?? "Type it within 10 minutes in the app that asks you to confirm your email."
        return Mail(from: from, to: email, subject: "Your \(name) verification code: \(code)", body: """
            Your verification code is \(code).

            \(howTo) If you did not register, ignore this mail.
            """)
    }

    /// Mails the first code of a new account, unless the app that registered it (`app`) does not
    /// ask for a verified email. A failure is logged (its kind, never the code) and does not undo
    /// the registration: the person asks for a new code.
    func issueAfterRegistration(userID: String, email: String, app: EventualApp? = nil, now: Int64) async {
        // NB: only an app that needs a verified email (SpendiQ) is mailed one; a client that names
        // no app (an older one, or the course contract's) gets a mail that names none.
        guard app?.needsVerifiedEmail ?? true else { return }
        do {
            try await issue(userID: userID, email: email, app: app, now: now)
        } catch {
            logger.warning("verification mail not sent", metadata: ["error": "\(LogSafe.describe(error))"])
        }
    }

    /// Mails a new code if `email` belongs to an unverified account whose last mail is at least a minute old.
    func resend(email: String, app: EventualApp? = nil, now: Int64) async throws {
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
        try await issue(userID: id, email: address, app: app, now: now)
    }

    /// Checks a code typed by the person who registered `email`, from `address` (the request's
    /// client when nil). Past a limit on failures `Throttle` refuses it before anything is looked at.
    func verify(email: String, code: String, now: Int64, from address: String? = nil) async throws -> Outcome {
        let address = address ?? RequestScope.current?.clientAddress ?? "unknown"
        try await throttle.checkVerification(email: email, address: address, now: now)
        return try await database.transaction { [throttle] sql in
            let outcome = try await Self.decide(email: email, code: code, now: now, hash: { self.hash(code, userID: $0) }, on: sql)
            if outcome != .verified {
                try await throttle.recordVerificationFailure(email: email, address: address, now: now, on: sql)
            }
            return outcome
        }
    }

    private static func decide(email: String, code: String, now: Int64, hash: (String) -> String, on sql: any SQLDatabase) async throws -> Outcome {
        guard let user = try await sql.select().columns("id", "email_verified_at").from("users")
            .where("email_key", .equal, AccountRules.key(email)).first() else { return .noAccount }
        if try user.decode(column: "email_verified_at", as: Int64?.self) != nil { return .alreadyVerified }
        let id = try user.decode(column: "id", as: String.self)
        guard let row = try await sql.select().columns("code_hash", "expires_at", "failed_attempts").from("email_verifications")
            .where("user_id", .equal, id).first() else { return .noCode }
        let failed = try row.decode(column: "failed_attempts", as: Int.self)
        guard failed < maxTries else { return .tooManyTries }
        guard try row.decode(column: "expires_at", as: Int64.self) > now else { return .expired }
        let stored = try row.decode(column: "code_hash", as: String.self)
        guard constantTimeEqual(stored, hash(id)) else {
            try await sql.update("email_verifications").set("failed_attempts", to: failed + 1).where("user_id", .equal, id).run()
            return .wrong(triesLeft: maxTries - failed - 1)
        }
        try await sql.update("users").set("email_verified_at", to: now).where("id", .equal, id).run()
        try await sql.delete(from: "email_verifications").where("user_id", .equal, id).run()
        return .verified
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
    /// One answer for every failure.
    static let failure = Refusal.invalid(
        "Wrong or expired code, or nothing to verify: type the code of the newest mail (codes last 10 minutes and allow 5 tries), or ask for a new one")

    /// The answer for people; nil only when this try verified the email.
    var refusal: Refusal? {
        // NB: one answer for an unknown email, an unverified one, a verified one, a wrong, an
        // expired or a used-up code: nobody learns who has an account, or whether it is verified.
        self == .verified ? nil : Self.failure
    }
}
