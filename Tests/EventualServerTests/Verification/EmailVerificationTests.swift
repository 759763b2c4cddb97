import Foundation
import Hummingbird
import Testing
@testable import EventualServer

@Suite("Email verification over HTTP: one answer for every failure, limits per email and per address", .timeLimit(.minutes(3)))
struct EmailVerificationTests {
    private static func from(_ address: String) -> HTTPFields { [.init("X-Forwarded-For")!: address] }

    /// A server whose mail lands in a scratch folder, and that folder.
    private func withMailingServer(_ backend: Backend, configure: @escaping (inout ServerConfiguration) -> Void = { _ in },
                                   _ test: @Sendable (API, Mailbox) async throws -> Void) async throws {
        let folder = try ScratchFolder("eventual-mail")
        defer { folder.remove() }
        let mailbox = Mailbox(folder: folder.url)
        try await withServer(backend, configure: { configuration in
            configuration.mail = .directory(folder.url.path)
            configure(&configuration)
        }) { api in try await test(api, mailbox) }
    }

    private func verify(_ api: API, _ email: String, _ code: String, headers: HTTPFields = [:]) async throws -> Answer {
        try await api.send(.post, "/v1/account/verification", headers: headers, json: #"{"email":\#(jsonString(email)),"code":"\#(code)"}"#)
    }

    @Test(arguments: Backend.available)
    func unknownUnverifiedAndVerifiedEmailsGetTheSameAnswer(_ backend: Backend) async throws {
        try await withMailingServer(backend) { api, mailbox in
            // Given an unverified account, a verified one and an email nobody registered
            let unverified = try await api.signUp("unverified")
            let verified = try await api.signUp("verified")
            let code = try mailbox.code(to: verified.email)
            #expect(try await verify(api, verified.email, code).status == .noContent)
            let wrong = code == "000000" ? "111111" : "000000"
            // When each is sent the same wrong code
            var answers: [Answer] = []
            for email in ["nobody.\(UUID().uuidString.prefix(8))@example.com", unverified.email, verified.email] {
                answers.append(try await verify(api, email, wrong))
            }
            // Then every answer is the same 400, word for word
            #expect(answers.allSatisfy { $0.status == .badRequest })
            let messages = try answers.map { try $0.error().message }
            #expect(Set(messages).count == 1, "\(messages)")
            // And the verified account's own code, typed again, verifies nothing: 204 only when this request verified
            let again = try await verify(api, verified.email, code)
            #expect(again.status == .badRequest)
            #expect(try again.error().message == messages[0])
            // And the unverified account's right code still verifies (the probe used one try, not all)
            #expect(try await verify(api, unverified.email, try mailbox.code(to: unverified.email)).status == .noContent)
        }
    }

    @Test(arguments: Backend.available)
    func probesFromOneAddressAreLimitedAndOthersAreNot(_ backend: Backend) async throws {
        try await withMailingServer(backend, configure: {
            $0.trustForwardedFor = true
            $0.throttle.failedVerificationsPerAddress.limit = 6
        }) { api, mailbox in
            let owner = try await api.signUp("owner")
            let prober = Self.from("203.0.113.40")
            // Given six failed tries from one address, over as many emails
            for index in 0..<6 {
                #expect(try await verify(api, "probe\(index)@example.com", "123456", headers: prober).status == .badRequest)
            }
            // When it tries again, for any email
            let next = try await verify(api, owner.email, "123456", headers: prober)
            // Then it is 429 with Retry-After, as for an email nobody has
            #expect(next.status == .tooManyRequests, "\(next.text)")
            let retryAfter = try #require(next.headers[.retryAfter].flatMap(Int.init))
            #expect(retryAfter > 0 && retryAfter <= 3600)
            #expect(try await verify(api, "nobody@example.com", "123456", headers: prober).status == .tooManyRequests)
            // And the owner, from their own address, verifies
            let code = try mailbox.code(to: owner.email)
            #expect(try await verify(api, owner.email, code, headers: Self.from("198.51.100.8")).status == .noContent)
        }
    }

    @Test func guessesPerEmailAreLimitedWhateverTheAddresses() async throws {
        try await withMailingServer(.sqlite, configure: {
            $0.trustForwardedFor = true
            $0.throttle.failedVerificationsPerEmail.limit = 8
        }) { api, mailbox in
            let owner = try await api.signUp("target")
            let code = try mailbox.code(to: owner.email)
            let wrong = code == "000000" ? "111111" : "000000"
            // Given eight wrong codes from eight addresses (no limit per address is reached)
            for index in 0..<8 {
                #expect(try await verify(api, owner.email, wrong, headers: Self.from("203.0.113.\(index + 1)")).status == .badRequest)
            }
            // When the right code comes from yet another address
            let answer = try await verify(api, owner.email, code, headers: Self.from("198.51.100.9"))
            // Then the day's guesses for this email are used up: 429, not a 9th check
            #expect(answer.status == .tooManyRequests, "\(answer.text)")
            #expect(try answer.error().message.contains("Too many"))
        }
    }

    @Test(arguments: Backend.available)
    func aRegistrationIsMailedInTheWordsOfItsAppOrOfNone(_ backend: Backend) async throws {
        try await withMailingServer(backend) { api, mailbox in
            func register(_ name: String, app: String?) async throws -> String {
                let suffix = UUID().uuidString.prefix(8).lowercased()
                let email = "\(name).\(suffix)@example.com"
                let appField = app.map { #","app":"\#($0)""# } ?? ""
                let answer = try await api.send(.post, "/users", json: """
                    {"username":"\(name)_\(suffix)","email":"\(email)","password":"long enough"\(appField)}
                    """)
                try #require(answer.status == .created, "\(answer.text)")
                return email
            }
            // SpendiQ's mail names SpendiQ and its command
            let spender = try await mailbox.mail(to: try await register("spender", app: "spendiq"))
            #expect(spender.contains("Subject: Your SpendiQ verification code: ") && spender.contains("spendiq verify "))
            // A client that names no app gets a mail that names none
            let anyone = try await mailbox.mail(to: try await register("anyone", app: nil))
            #expect(anyone.contains("Subject: Your Eventual verification code: "))
            #expect(!anyone.lowercased().contains("spendiq"))
            // SustainU and the pantry need no verified email: no mail at all
            let recycler = try await register("recycler", app: "sustainu")
            let cook = try await register("cook", app: "pantry")
            try await Task.sleep(for: .milliseconds(200))
            #expect(try mailbox.all().allSatisfy { !$0.contains("To: \(recycler)\r\n") && !$0.contains("To: \(cook)\r\n") })
            // An app this server does not serve is a 404 naming it, not a 500; a name no app
            // could have is a 400
            let unknown = try await api.send(.post, "/users", json: #"{"username":"other_app","email":"o@example.com","password":"long enough","app":"mail"}"#)
            #expect(unknown.status == .notFound && unknown.text.contains("'mail'"), "\(unknown.text)")
            let odd = try await api.send(.post, "/users", json: #"{"username":"odd_app","email":"p@example.com","password":"long enough","app":"Mail!"}"#)
            #expect(odd.status == .badRequest, "\(odd.text)")
        }
    }
}

/// The mails a server dropped as files in a folder.
struct Mailbox: Sendable {
    let folder: URL

    func all() throws -> [String] {
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        return try files.filter { $0.hasSuffix(".eml") }.sorted()
            .map { try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8) }
    }

    /// The newest mail to `address`.
    func mail(to address: String) throws -> String {
        guard let mail = try all().last(where: { $0.contains("To: \(address)\r\n") }) else {
            throw TestFailure("no mail to \(address) in \(folder.path)")
        }
        return mail
    }

    /// The code of the newest mail to `address`.
    func code(to address: String) throws -> String {
        let mail = try mail(to: address)
        guard let range = mail.range(of: "Your verification code is ") else { throw TestFailure("no code in the mail") }
        return String(mail[range.upperBound...].prefix(6))
    }
}
