import Foundation
import Testing
@testable import EventualServer

@Suite("Accounts: register, login, profile, logout", .timeLimit(.minutes(2)))
struct AccountsTests {
    @Test(arguments: Backend.available)
    func registrationAnswersTheProfileWithoutThePassword(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // When
            let answer = try await api.register(username: "ada.l", email: "Ada@Example.com", password: "analytical")
            // Then
            #expect(answer.status == .created)
            let user = try answer.decode(UserJSON.self)
            #expect(user.username == "ada.l")
            #expect(user.email == "Ada@Example.com")
            #expect(UUID(uuidString: user.id) != nil)
            #expect(!answer.text.contains("analytical"))
            #expect(!answer.text.lowercased().contains("password"))
            #expect(!answer.text.contains("$2b$"), "no bcrypt hash in the answer")
        }
    }

    @Test(arguments: Backend.available)
    func registrationRejectsEachInvalidField(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let cases: [(username: String, email: String, password: String, mentions: String)] = [
                ("ab", "a@example.com", "long enough", "username"),
                (String(repeating: "a", count: 33), "a@example.com", "long enough", "username"),
                ("has space", "a@example.com", "long enough", "username"),
                ("émile", "a@example.com", "long enough", "username"),
                ("valid_name", "not-an-email", "long enough", "email"),
                ("valid_name", "a@b", "long enough", "email"),
                ("valid_name", "a b@example.com", "long enough", "email"),
                ("valid_name", "a@example.com", "short", "password"),
                ("valid_name", "a@example.com", String(repeating: "x", count: 73), "password"),
            ]
            for invalid in cases {
                let answer = try await api.register(username: invalid.username, email: invalid.email, password: invalid.password)
                #expect(answer.status == .badRequest, "\(invalid)")
                #expect(try answer.error().message.contains(invalid.mentions), "\(invalid)")
            }
        }
    }

    @Test(arguments: Backend.available)
    func registrationRefusesATakenEmailOrUsernameWhateverTheCase(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given
            #expect(try await api.register(username: "grace", email: "grace@example.com").status == .created)
            // When
            let sameEmail = try await api.register(username: "grace2", email: "GRACE@example.com")
            let sameName = try await api.register(username: "Grace", email: "other@example.com")
            // Then
            #expect(sameEmail.status == .conflict)
            #expect(try sameEmail.error().message.contains("email"))
            #expect(sameName.status == .conflict)
            #expect(try sameName.error().message.contains("username"))
        }
    }

    @Test(arguments: Backend.available)
    func replayedRegistrationWithTheSameKeyCreatesOneUser(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given a registration whose answer was lost
            let first = try await api.register(username: "linus", email: "linus@example.com", key: "reg-1")
            // When the client sends it again with the same key
            let replay = try await api.register(username: "linus", email: "linus@example.com", key: "reg-1")
            // Then it gets the same answer instead of a conflict
            #expect(first.status == .created)
            #expect(replay.status == .created)
            #expect(try replay.decode(UserJSON.self) == first.decode(UserJSON.self))
            // And a different request for the same account under that key is refused
            // (a stranger's registration under the same key is another scope: see GrowthAndFingerprintTests)
            let reused = try await api.register(username: "other", email: "linus@example.com", key: "reg-1")
            #expect(reused.status == .unprocessableContent)
            #expect(try reused.error().message.contains("Idempotency-Key"))
        }
    }

    @Test(arguments: Backend.available)
    func loginGivesATokenThatOpensTheProfile(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp("margaret")
            let me = try await api.send(.get, "/users/me", headers: account.bearer)
            #expect(me.status == .ok)
            let user = try me.decode(UserJSON.self)
            #expect(user.id == account.id)
            #expect(user.email == account.email)
        }
    }

    @Test(arguments: Backend.available)
    func loginAcceptsTheEmailInAnyCase(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp("case")
            let answer = try await api.login(email: account.email.uppercased(), password: account.password)
            #expect(answer.status == .created)
        }
    }

    @Test(arguments: Backend.available)
    func wrongPasswordAndUnknownEmailGetTheSameAnswer(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp("barbara")
            let wrongPassword = try await api.login(email: account.email, password: "not the password")
            let unknownEmail = try await api.login(email: "nobody@example.com", password: account.password)
            #expect(wrongPassword.status == .unauthorized)
            #expect(unknownEmail.status == .unauthorized)
            #expect(try wrongPassword.error().message == unknownEmail.error().message)
        }
    }

    @Test(arguments: Backend.available)
    func profileNeedsAValidToken(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let none = try await api.send(.get, "/users/me")
            let garbage = try await api.send(.get, "/users/me", headers: [.authorization: "Bearer not-a-token"])
            let wrongScheme = try await api.send(.get, "/users/me", headers: [.authorization: "Basic dXNlcjpwYXNz"])
            for answer in [none, garbage, wrongScheme] {
                #expect(answer.status == .unauthorized)
                #expect(answer.headers[.wwwAuthenticate] == "Bearer")
                _ = try answer.error()
            }
        }
    }

    @Test(arguments: Backend.available)
    func logoutRevokesThatTokenOnly(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given one user signed in twice
            let account = try await api.signUp("ken")
            let second = try await api.login(email: account.email, password: account.password)
            struct Token: Decodable { let accessToken: String }
            let otherToken = try second.decode(Token.self).accessToken
            // When the first session logs out
            let logout = try await api.send(.post, "/auth/logout", headers: account.bearer)
            // Then that token is refused and the other still works
            #expect(logout.status == .noContent)
            #expect(try await api.send(.get, "/users/me", headers: account.bearer).status == .unauthorized)
            #expect(try await api.send(.post, "/auth/logout", headers: account.bearer).status == .unauthorized)
            #expect(try await api.send(.get, "/users/me", headers: [.authorization: "Bearer \(otherToken)"]).status == .ok)
        }
    }
}
