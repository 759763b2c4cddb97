import EventualAPI
import EventualKit
import Foundation
import Logging
import SQLKit
import Synchronization
import Testing
@testable import EventualServer
@testable import Spending

/// Keeps the mails the verification sends, for the storage-level tests (the HTTP tests use the SMTP sink).
final class MailRecorder: MailSender {
    let mails = Mutex<[Mail]>([])
    func send(_ mail: Mail) async throws { mails.withLock { $0.append(mail) } }
    var lastCode: String? { mails.withLock { $0.last }.flatMap { try? code(in: $0.body) } }
}

@Suite("Email verification: 6 digits, 10 minutes, 5 tries, stored hashed; mail over real SMTP", .timeLimit(.minutes(3)))
struct VerificationTests {
    /// A verification on a scratch database of `backend`, with one registered user.
    static func withVerification(_ backend: Backend, _ body: (EmailVerification, MailRecorder, Database, String) async throws -> Void) async throws {
        let scratch = try await ScratchDatabase.make(backend)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let database = try await Database.open(scratch.location, logger: logger)
        do {
            let recorder = MailRecorder()
            let key = Data(repeating: 7, count: 32)
            let verification = EmailVerification(database: database, key: key, mailer: recorder, from: "t@example.com",
                                                 throttle: Throttle(database: database, limits: ThrottleLimits(), keyBytes: key), logger: logger)
            let user = UserRecord(id: UUID().uuidString.lowercased(), username: "vera", email: "vera@example.com", passwordHash: "x", createdAt: 0, updatedAt: 0)
            try await database.transaction { sql in try await AccountStore(database: database).register(user, on: sql) }
            try await body(verification, recorder, database, user.id)
        } catch {
            await database.close()
            await scratch.remove()
            throw error
        }
        await database.close()
        await scratch.remove()
    }

    @Test(arguments: Backend.available)
    func theRightCodeVerifiesAndOnlyItsHashIsStored(_ backend: Backend) async throws {
        try await Self.withVerification(backend) { verification, recorder, database, userID in
            let now: Int64 = 1_800_000_000_000
            try await verification.issue(userID: userID, email: "vera@example.com", now: now)
            let code = try #require(recorder.lastCode)
            #expect(code.count == 6 && code.allSatisfy(\.isNumber))
            let stored = try await database.withConnection { sql in
                try await sql.select().column("code_hash").from("email_verifications").where("user_id", .equal, userID).first()?
                    .decode(column: "code_hash", as: String.self)
            }
            #expect(stored != nil && stored != code && !(stored ?? "").contains(code))
            #expect(try await verification.verify(email: "vera@example.com", code: code, now: now + 60_000) == .verified)
            #expect(try await verification.verify(email: "vera@example.com", code: code, now: now + 61_000) == .alreadyVerified)
        }
    }

    @Test(arguments: Backend.available)
    func aCodeExpiresAfterTenMinutes(_ backend: Backend) async throws {
        try await Self.withVerification(backend) { verification, recorder, _, userID in
            let now: Int64 = 1_800_000_000_000
            try await verification.issue(userID: userID, email: "vera@example.com", now: now)
            let code = try #require(recorder.lastCode)
            #expect(try await verification.verify(email: "vera@example.com", code: code, now: now + 10 * 60_000) == .expired)
            #expect(EmailVerification.Outcome.expired.refusal == EmailVerification.Outcome.failure)
            // A new code works, and the old one no longer does
            try await verification.issue(userID: userID, email: "vera@example.com", now: now + 11 * 60_000)
            let fresh = try #require(recorder.lastCode)
            if fresh != code {
                #expect(try await verification.verify(email: "vera@example.com", code: code, now: now + 12 * 60_000) == .wrong(triesLeft: 4))
            }
            #expect(try await verification.verify(email: "vera@example.com", code: fresh, now: now + 12 * 60_000) == .verified)
        }
    }

    @Test(arguments: Backend.available)
    func fiveWrongTriesEndTheCodeEvenForTheRightOne(_ backend: Backend) async throws {
        try await Self.withVerification(backend) { verification, recorder, _, userID in
            let now: Int64 = 1_800_000_000_000
            try await verification.issue(userID: userID, email: "vera@example.com", now: now)
            let code = try #require(recorder.lastCode)
            let wrong = code == "000000" ? "111111" : "000000"
            var outcomes: [EmailVerification.Outcome] = []
            for _ in 0..<5 { outcomes.append(try await verification.verify(email: "vera@example.com", code: wrong, now: now + 1000)) }
            #expect(outcomes == [.wrong(triesLeft: 4), .wrong(triesLeft: 3), .wrong(triesLeft: 2), .wrong(triesLeft: 1), .wrong(triesLeft: 0)])
            #expect(try await verification.verify(email: "vera@example.com", code: code, now: now + 2000) == .tooManyTries)
            #expect(try await verification.verify(email: "nobody@example.com", code: code, now: now + 2000) == .noAccount)
        }
    }

    @Test(arguments: Backend.available)
    func resendsDoNotResetTheDaysGuesses(_ backend: Backend) async throws {
        try await Self.withVerification(backend) { verification, recorder, _, userID in
            let start: Int64 = 1_800_000_000_000
            // Given four codes, each mailed after the last one's five wrong tries
            var failures = 0
            for round in 0..<4 {
                let now = start + Int64(round) * 61_000
                try await verification.issue(userID: userID, email: "vera@example.com", now: now)
                let code = try #require(recorder.lastCode)
                let wrong = code == "000000" ? "111111" : "000000"
                for _ in 0..<5 {
                    _ = try await verification.verify(email: "vera@example.com", code: wrong, now: now + 1000)
                    failures += 1
                }
            }
            #expect(failures == ThrottleLimits().failedVerificationsPerEmail.limit)
            // When a fifth code is mailed, even the right code is refused for the rest of the day
            let later = start + 5 * 61_000
            try await verification.issue(userID: userID, email: "vera@example.com", now: later)
            let code = try #require(recorder.lastCode)
            do {
                _ = try await verification.verify(email: "vera@example.com", code: code, now: later + 1000)
                Issue.record("a 21st try within a day was checked")
            } catch let error as APIError {
                #expect(error.status == .tooManyRequests && (error.retryAfter ?? 0) > 23 * 3600)
            }
            // An unknown email is bounded the same way, so the refusal tells nothing
            for _ in 0..<20 { _ = try await verification.verify(email: "nobody@example.com", code: code, now: later + 2000) }
            await #expect(throws: APIError.self) { try await verification.verify(email: "nobody@example.com", code: code, now: later + 3000) }
            // Then a day after the first failures, a fresh code verifies
            let nextDay = start + 24 * 3600 * 1000 + 400_000
            try await verification.issue(userID: userID, email: "vera@example.com", now: nextDay)
            let fresh = try #require(recorder.lastCode)
            #expect(try await verification.verify(email: "vera@example.com", code: fresh, now: nextDay + 1000) == .verified)
        }
    }

    @Test(arguments: Backend.available)
    func atMostTenCodesAreMailedToAnAccountADay(_ backend: Backend) async throws {
        try await Self.withVerification(backend) { verification, recorder, _, userID in
            let start: Int64 = 1_800_000_000_000
            for minute in 0..<15 {
                try await verification.resend(email: "vera@example.com", now: start + Int64(minute) * 61_000)
            }
            #expect(recorder.mails.withLock { $0.count } == ThrottleLimits().verificationMailsPerAccount.limit)
            try await verification.resend(email: "vera@example.com", now: start + 24 * 3600 * 1000 + 1)
            #expect(recorder.mails.withLock { $0.count } == ThrottleLimits().verificationMailsPerAccount.limit + 1)
            _ = userID
        }
    }

    @Test func everyFailureIsOneAnswerAndOnlyAVerifyingTryIs204() {
        let failures: [EmailVerification.Outcome] = [.alreadyVerified, .noAccount, .noCode, .tooManyTries, .expired,
                                                     .wrong(triesLeft: 4), .wrong(triesLeft: 0)]
        #expect(failures.allSatisfy { $0.refusal == EmailVerification.Outcome.failure })
        #expect(EmailVerification.Outcome.verified.refusal == nil)
    }

    @Test func registrationMailsTheCodeThroughSMTPAndVerifyingOpensSpendiq() async throws {
        let sink = try await SMTPSink.start()
        do {
            try await withLiveServer(configure: { $0.mail = .smtp(sink.url) }) { server, scratch in
                let user = try await SpendingUser.registered(on: server, scratch: scratch)
                let mail = try await sink.mail(to: user.email)
                // SpendiQ names itself at registration, so the mail is in its words
                #expect(mail.data.contains("Subject: Your SpendiQ verification code: ") && mail.data.contains("spendiq verify"))
                let app = spendingDevice(scratch.folder("phone"), server: server)
                await #expect(throws: SpendingError.notVerified) { try await app.login(email: user.email, password: user.password) }
                // Wrong, then right: the server counts the try and then verifies
                let code = try code(in: mail.data)
                await #expect(throws: SpendingError.server(EmailVerification.Outcome.failure.message)) {
                    try await app.verify(code: code == "123456" ? "654321" : "123456", email: user.email)
                }
                try await app.verify(code: code, email: user.email)
                #expect(try await app.login(email: user.email, password: user.password).online)
                // No mail folder was written: SMTP carried it
                #expect(!FileManager.default.fileExists(atPath: scratch.url.appendingPathComponent("mail").path))
            }
        } catch {
            await sink.stop()
            throw error
        }
        await sink.stop()
    }

    @Test func aNewCodeIsMailedOnRequestAtMostOnceAMinute() async throws {
        let sink = try await SMTPSink.start()
        do {
            try await withLiveServer(configure: { $0.mail = .smtp(sink.url) }) { server, scratch in
                let user = try await SpendingUser.registered(on: server, scratch: scratch)
                _ = try await sink.mail(to: user.email)
                let app = spendingDevice(scratch.folder("phone"), server: server)
                try await app.resendCode(email: user.email)
                try await app.resendCode(email: "nobody.at.all@example.com")
                try await Task.sleep(for: .milliseconds(300))
                // Within the minute the request is answered (202) but nothing more is mailed, to anyone
                #expect(sink.mails.count == 1)
            }
        } catch {
            await sink.stop()
            throw error
        }
        await sink.stop()
    }
}
