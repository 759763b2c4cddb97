import EventualAPI
import Foundation

/// The accounts side of an app on one device, the same for every app: register (online only),
/// sign in online or, for a while after the last online sign-in, offline; who am I; sign out,
/// offline too (the token's revocation waits). One person's data lives on a device at a time, in
/// a folder of their own that sign-out and a sign-in as someone else remove.
public struct DeviceAccounts: Sendable {
    public let vault: SessionVault
    public let link: ServerLink
    /// The folder of a user's data on this device.
    let userDirectory: @Sendable (_ userID: String) -> URL
    /// Outbox entries of a user not yet accepted by the server: waiting (pending) and refused (failed).
    let outboxCounts: @Sendable (_ userID: String) throws -> OutboxCounts
    let serverURL: URL
    let timeout: Duration
    let timeouts: ServerLink.Timeouts

    /// - Parameter outboxCounts: a user's waiting and refused outbox entries on this device
    ///   (`Outbox(store:).counts()` of their store; zero when they have none here).
    public init(vault: SessionVault, serverURL: URL, timeout: Duration, timeouts: ServerLink.Timeouts,
                userDirectory: @escaping @Sendable (String) -> URL, outboxCounts: @escaping @Sendable (String) throws -> OutboxCounts) {
        self.vault = vault
        self.serverURL = serverURL
        self.timeout = timeout
        self.timeouts = timeouts
        self.userDirectory = userDirectory
        self.outboxCounts = outboxCounts
        let revocations = RevocationMiddleware(vault: vault) { token in
            try await Self.revoke(token, serverURL: serverURL, timeout: timeout, timeouts: timeouts)
        }
        link = ServerLink(serverURL: serverURL, timeout: timeout, timeouts: timeouts, middlewares: [revocations]) { vault.accessToken }
    }

    /// As above, with only the number of unsent entries (it cannot tell refused ones from waiting ones).
    public init(vault: SessionVault, serverURL: URL, timeout: Duration, timeouts: ServerLink.Timeouts,
                userDirectory: @escaping @Sendable (String) -> URL, unsentCount: @escaping @Sendable (String) throws -> Int) {
        self.init(vault: vault, serverURL: serverURL, timeout: timeout, timeouts: timeouts, userDirectory: userDirectory,
                  outboxCounts: { OutboxCounts(pending: try unsentCount($0), failed: 0) })
    }

    /// Creates an account on the server; `app` names the app registering it (the server mails a
    /// verification code only to the apps that need one).
    public func register(username: String, email: String, password: String, app: Components.Schemas.AppName? = nil) async throws -> DeviceAccount {
        let answer: Operations.Register.Output
        do {
            answer = try await link.client.register(body: .json(.init(username: username, email: email, password: password, app: app)))
        } catch {
            throw AccountError.unreachable(RemoteFailure.from(error).description)
        }
        switch answer {
        case .created(let created):
            let user = try created.body.json
            return DeviceAccount(id: user.id, username: user.username, email: user.email)
        case .badRequest(let answer): throw AccountError.refused(try answer.body.json.message)
        case .conflict(let answer): throw AccountError.refused(try answer.body.json.message)
        case .unprocessableContent(let answer): throw AccountError.refused(try answer.body.json.message)
        case .undocumented(let status, let payload): throw AccountError.refused(await remoteFailure(status, payload).description)
        }
    }

    /// Signs in through the server or, when it cannot be reached, with the password checked on
    /// this device. Refused while another person's changes wait on this device; a sign-in as
    /// someone else removes the previous person's data.
    public func signIn(email: String, password: String) async throws -> (session: Session, online: Bool) {
        let previous = try vault.saved()
        if let previous, previous.email.lowercased() != email.lowercased() {
            let counts = try outboxCounts(previous.userID)
            let unsent = counts.pending + counts.failed
            if unsent > 0 { throw SessionError.otherUserHasPendingChanges(username: previous.username, count: unsent) }
        }
        let session: Session
        var online = true
        do {
            session = try await vault.signIn(email: email, password: password, client: link.client)
        } catch let error as SessionError {
            throw error
        } catch {
            let failure = RemoteFailure.from(error)
            guard case .unreachable = failure else { throw AccountError.refused(failure.description) }
            session = try await vault.unlockOffline(email: email, password: password)
            online = false
        }
        if let previous, previous.userID != session.userID {
            try? FileManager.default.removeItem(at: userDirectory(previous.userID))
        }
        if online { try? await vault.flushRevocations(revoke: revoke) }
        return (session, online)
    }

    /// The person signed in on this device, if any (their session may be locked).
    public func whoami() throws -> DeviceAccount? {
        try vault.saved().map { DeviceAccount(id: $0.userID, username: $0.username, email: $0.email) }
    }

    /// The saved sign-in, resumed; nil when nobody is signed in (or the offline period is over).
    public func resume() throws -> Session? { try vault.resume() }

    /// Signs out and removes the person's data from this device. Refused while changes wait to
    /// be sent or were refused by the server, unless `discarding` says which may be lost: the
    /// refused ones only, or everything. Offline, the revocation waits.
    public func signOut(discarding: SignOutDiscard = .nothing) async throws -> DeviceSignOut {
        guard let session = try vault.saved() else { throw AccountError.notSignedIn }
        let counts = try outboxCounts(session.userID)
        switch discarding {
        case .nothing where counts.pending > 0 || counts.failed > 0,
             .failed where counts.pending > 0:
            throw SessionError.unsentChanges(waiting: counts.pending, refused: counts.failed)
        default:
            break
        }
        try await vault.signOut(revoke: revoke)
        try? FileManager.default.removeItem(at: userDirectory(session.userID))
        return DeviceSignOut(username: session.username, discardedWaiting: counts.pending, discardedRefused: counts.failed,
                             revocationQueued: !(try vault.pendingRevocations()).isEmpty)
    }

    /// Signs out; with `force`, whatever has not reached the server is lost (`discarding: .everything`).
    public func signOut(force: Bool = false) async throws -> DeviceSignOut {
        try await signOut(discarding: force ? .everything : .nothing)
    }

    /// Sends sign-outs the server has not heard of yet.
    public func flushRevocations() async {
        try? await vault.flushRevocations(revoke: revoke)
    }

    /// Revokes an access token on the server; an already refused token counts as revoked.
    @Sendable public func revoke(_ token: String) async throws {
        try await Self.revoke(token, serverURL: serverURL, timeout: timeout, timeouts: timeouts)
    }

    private static func revoke(_ token: String, serverURL: URL, timeout: Duration, timeouts: ServerLink.Timeouts) async throws {
        // NB: a link of its own, without the revocations' middleware, so that sending one never sends them again.
        let link = ServerLink(serverURL: serverURL, timeout: timeout, timeouts: timeouts) { token }
        switch try await link.client.logout() {
        case .noContent, .unauthorized: return
        case .undocumented(let status, _): throw RemoteFailure.status(status, message: "sign-out failed (HTTP \(status))")
        }
    }
}

/// A person as the server knows them.
public struct DeviceAccount: Sendable, Equatable, Codable {
    public let id: String
    public let username: String
    public let email: String
}

/// What a sign-out may throw away.
public enum SignOutDiscard: Sendable, Equatable {
    /// Nothing: refused while anything waits or was refused.
    case nothing
    /// The changes the server refused; refused while others still wait to be sent.
    case failed
    /// Everything not on the server yet, waiting or refused.
    case everything
}

/// The outcome of a sign-out.
public struct DeviceSignOut: Sendable, Equatable {
    public let username: String
    /// Changes that were still waiting to be sent, lost (only with `.everything`).
    public let discardedWaiting: Int
    /// Changes the server had refused, dropped.
    public let discardedRefused: Int
    /// The server has not heard of the sign-out yet; it will at the next chance.
    public let revocationQueued: Bool

    /// Every change that never reached the server.
    public var discarded: Int { discardedWaiting + discardedRefused }
}

/// Why an account action did not happen.
public enum AccountError: Error, Equatable, CustomStringConvertible {
    /// Nobody is signed in on this device.
    case notSignedIn
    /// The server could not be reached (registering needs it).
    case unreachable(String)
    /// The server refused, with its reason.
    case refused(String)

    public var description: String {
        switch self {
        case .notSignedIn: return "Not signed in: log in with your email first"
        case .unreachable(let reason): return reason
        case .refused(let message): return message
        }
    }
}
