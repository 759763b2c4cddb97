import EventualAPI
import EventualKit
import Foundation
import GRDB

/// The app on one device: accounts (register, sign in online or offline, sign out, who am I)
/// and the signed-in user's pantry. One user's data lives on a device at a time, in its own
/// database file under the data directory.
public final class PantryApp: Sendable {
    /// The app's version, as its usage events carry it.
    public static let version = "1.0.0"

    public let configuration: PantryConfiguration
    public let vault: SessionVault
    let link: ServerLink

    public init(configuration: PantryConfiguration) {
        self.configuration = configuration
        let vault = SessionVault(secrets: FileSecretStore(directory: configuration.secretsDirectory),
                                 maxOfflineAge: configuration.maxOfflineAge, rounds: configuration.passwordRounds)
        self.vault = vault
        link = ServerLink(serverURL: configuration.serverURL, timeout: configuration.requestTimeout,
                          timeouts: configuration.timeouts) { vault.accessToken }
    }

    // MARK: - Accounts

    /// Creates an account on the server (registering needs the network).
    public func register(username: String, email: String, password: String) async throws -> Account {
        let answer: Operations.Register.Output
        do {
            answer = try await link.client.register(body: .json(.init(username: username, email: email, password: password)))
        } catch {
            throw PantryError.unreachable(Self.reason(error))
        }
        switch answer {
        case .created(let created):
            let user = try created.body.json
            return Account(id: user.id, username: user.username, email: user.email)
        case .badRequest(let answer): throw PantryError.server(try answer.body.json.message)
        case .conflict(let answer): throw PantryError.server(try answer.body.json.message)
        case .unprocessableContent(let answer): throw PantryError.server(try answer.body.json.message)
        case .undocumented(let status, _): throw PantryError.server("Registering failed (HTTP \(status))")
        }
    }

    /// Signs in through the server, or, when it cannot be reached, with the password checked
    /// on this device (for 7 days after the last online sign-in). Returns the user's pantry;
    /// after an online sign-in it has already fetched what the user's other devices sent.
    public func login(email: String, password: String) async throws -> SignIn {
        let previous = try vault.saved()
        if let previous, previous.email.lowercased() != email.lowercased() {
            let pending = try pendingCount(userID: previous.userID)
            if pending > 0 { throw SessionError.otherUserHasPendingChanges(username: previous.username, count: pending) }
        }
        let session: Session
        var online = true
        do {
            session = try await vault.signIn(email: email, password: password, client: link.client)
        } catch let error as SessionError {
            throw error
        } catch {
            guard case .unreachable = RemoteFailure.from(error) else { throw PantryError.server(RemoteFailure.from(error).description) }
            session = try await vault.unlockOffline(email: email, password: password)
            online = false
        }
        if let previous, previous.userID != session.userID {
            try? FileManager.default.removeItem(at: configuration.userDirectory(previous.userID))
        }
        let pantry = try UserPantry(session: session, app: self)
        await pantry.analytics.record(.login)
        var report: SyncReport?
        if online {
            try? await vault.flushRevocations(revoke: revoke)
            report = await pantry.engine.syncNow()
        }
        return SignIn(pantry: pantry, online: online, pulled: report?.pulled ?? 0)
    }

    /// The user signed in on this device, if any (their session may be locked).
    public func whoami() throws -> Account? {
        try vault.saved().map { Account(id: $0.userID, username: $0.username, email: $0.email) }
    }

    /// The signed-in user's pantry, resuming the saved sign-in.
    public func open() throws -> UserPantry {
        guard let session = try vault.resume() else { throw PantryError.notSignedIn }
        return try UserPantry(session: session, app: self)
    }

    /// Signs out and removes the user's data from this device. Refused while changes have not
    /// reached the server, unless `force` (then they are lost). Offline, the token's revocation
    /// is queued and sent at the next online sign-in or sync.
    @discardableResult
    public func logout(force: Bool = false) async throws -> SignOut {
        guard let session = try vault.saved() else { throw PantryError.notSignedIn }
        let pending = try pendingCount(userID: session.userID)
        let discarded = try await vault.signOut(pendingChanges: pending, force: force, revoke: revoke)
        try? FileManager.default.removeItem(at: configuration.userDirectory(session.userID))
        let revocationQueued = !(try vault.pendingRevocations()).isEmpty
        return SignOut(username: session.username, discarded: discarded, revocationQueued: revocationQueued)
    }

    /// Revokes an access token on the server; an already refused token counts as revoked.
    @Sendable func revoke(_ token: String) async throws {
        let link = ServerLink(serverURL: configuration.serverURL, timeout: configuration.requestTimeout,
                              timeouts: configuration.timeouts) { token }
        switch try await link.client.logout() {
        case .noContent, .unauthorized: return
        case .undocumented(let status, _): throw RemoteFailure.status(status, message: "sign-out failed (HTTP \(status))")
        }
    }

    private func pendingCount(userID: String) throws -> Int {
        let path = configuration.databasePath(userID)
        guard FileManager.default.fileExists(atPath: path) else { return 0 }
        let store = try LocalStore(path: path, migrations: PantrySchema.migrations)
        let counts = try Outbox(store: store).counts()
        return counts.pending + counts.failed
    }

    static func reason(_ error: any Error) -> String {
        RemoteFailure.from(error).description
    }
}

/// A user as the server knows them.
public struct Account: Sendable, Equatable, Codable {
    public let id: String
    public let username: String
    public let email: String
}

/// The outcome of a sign-in.
public struct SignIn: Sendable {
    public let pantry: UserPantry
    /// False when the server could not be reached and the password was checked on this device.
    public let online: Bool
    /// Records fetched from the user's other devices.
    public let pulled: Int
}

/// The outcome of a sign-out.
public struct SignOut: Sendable, Equatable {
    public let username: String
    /// Changes that never reached the server (only with `force`).
    public let discarded: Int
    /// The server has not heard of the sign-out yet; it will at the next chance.
    public let revocationQueued: Bool
}
