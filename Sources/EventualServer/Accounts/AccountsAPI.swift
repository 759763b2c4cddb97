import EventualAPI
import Foundation

extension APIService {
    func register(_ input: Operations.Register.Input) async throws -> Operations.Register.Output {
        guard case .json(let registration) = input.body else { throw APIError.badRequest("expected a JSON body") }
        let username = try AccountRules.username(registration.username)
        let email = try AccountRules.email(registration.email)
        let password = try AccountRules.password(registration.password)
        let registeringApp = try registration.app.map(servedApp)
        // NB: the key is scoped by the account it creates: two strangers who pick the same key
        // cannot collide, and a client retrying its own registration finds its first answer.
        let replay = try idempotency.request(key: input.headers.idempotencyKey,
                                             scope: idempotency.scope("register", owner: AccountRules.key(email)), body: registration)
        let address = RequestScope.current?.clientAddress ?? "unknown"
        let now = UnixMillis.now()
        do {
            try await throttle.checkRegistration(address: address, now: now)
        } catch {
            metrics.registrationThrottled()
            throw error
        }

        let hash = try await passwords.hash(password)
        let user = UserRecord(id: UUID().uuidString.lowercased(), username: username, email: email,
                              passwordHash: hash, createdAt: now, updatedAt: now)
        let accounts = self.accounts, throttle = self.throttle
        let profile: Components.Schemas.User
        do {
            profile = try await idempotency.perform(replay) { sql in
                try await accounts.register(user, on: sql)
                try await SpaceGate.openPersonalSpace(of: user.id, now: now, on: sql)
                try await throttle.recordRegistration(address: address, now: now, on: sql)
                return Components.Schemas.User(user)
            }
        } catch let error where !(error is APIError || error is Refusal) {
            // NB: a registration that raced this one for the same email or username wins the unique index.
            if let conflict = try await accounts.conflict(for: user) { throw conflict }
            throw error
        }
        if profile.id == user.id {
            // NB: a replayed registration (same Idempotency-Key) created nothing and mails nothing.
            await verification.issueAfterRegistration(userID: user.id, email: user.email,
                                                      app: registeringApp, now: now)
        }
        return .created(.init(body: .json(profile)))
    }

    func login(_ input: Operations.Login.Input) async throws -> Operations.Login.Output {
        guard case .json(let credentials) = input.body else { throw APIError.badRequest("expected a JSON body") }
        try TextRules.check(credentials.email, field: "email")
        // NB: only NUL is refused here (bcrypt stops at it); a password registered before the
        // stricter registration rules, with a tab say, still signs in.
        try TextRules.check(credentials.password, field: "password", .anythingButNUL)
        let email = credentials.email.trimmingCharacters(in: .whitespacesAndNewlines)
        let now = UnixMillis.now()
        let standing: Throttle.LoginStanding
        do {
            standing = try await throttle.checkLogin(email: email, address: RequestScope.current?.clientAddress ?? "unknown", now: now)
        } catch {
            metrics.loginThrottled()
            throw error
        }
        let user = try await accounts.user(email: email)
        guard try await passwords.verify(credentials.password, against: user?.passwordHash), let user else {
            metrics.loginFailed()
            try await throttle.recordLoginFailure(standing, now: now)
            throw APIError.unauthorized("Wrong email or password")
        }
        try await throttle.recordLoginSuccess(standing)
        let token = AccessToken.generate()
        try await accounts.saveToken(hash: AccessToken.hash(token), userID: user.id, now: now,
                                     expiresAt: now + Int64(AccessToken.lifetime * 1000))
        return .created(.init(body: .json(.init(accessToken: token))))
    }

    func logout(_ input: Operations.Logout.Input) async throws -> Operations.Logout.Output {
        _ = try await authenticatedUserID()
        guard let token = RequestScope.current?.bearerToken else { throw APIError.unauthorized() }
        try await accounts.revokeToken(hash: AccessToken.hash(token), at: UnixMillis.now())
        await live.publish(.signedOut(AccessToken.fingerprint(ofHash: AccessToken.hash(token))))
        return .noContent(.init())
    }

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        let userID = try await authenticatedUserID()
        guard let user = try await accounts.user(id: userID) else { throw APIError.unauthorized() }
        return .ok(.init(body: .json(Components.Schemas.User(user))))
    }
}

extension Components.Schemas.User {
    /// The public profile: never the password or its hash.
    init(_ record: UserRecord) {
        self.init(id: record.id, username: record.username, email: record.email,
                  createdAt: UnixMillis.date(milliseconds: record.createdAt),
                  updatedAt: UnixMillis.date(milliseconds: record.updatedAt))
    }
}
