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
    public let accounts: DeviceAccounts

    public init(configuration: PantryConfiguration) {
        self.configuration = configuration
        let vault = SessionVault(secrets: FileSecretStore(directory: configuration.secretsDirectory),
                                 maxOfflineAge: configuration.maxOfflineAge, rounds: configuration.passwordRounds)
        accounts = DeviceAccounts(
            vault: vault, serverURL: configuration.serverURL, timeout: configuration.requestTimeout, timeouts: configuration.timeouts,
            userDirectory: configuration.userDirectory,
            outboxCounts: { userID in try Self.outboxCounts(userID: userID, configuration: configuration) })
    }

    public var vault: SessionVault { accounts.vault }
    var link: ServerLink { accounts.link }

    // MARK: - Accounts

    /// Creates an account on the server (registering needs the network).
    public func register(username: String, email: String, password: String) async throws -> Account {
        do {
            let account = try await accounts.register(username: username, email: email, password: password, app: .pantry)
            return Account(id: account.id, username: account.username, email: account.email)
        } catch let error as AccountError {
            throw PantryError(error)
        }
    }

    /// Signs in through the server, or, when it cannot be reached, with the password checked
    /// on this device (for 7 days after the last online sign-in). Returns the user's pantry;
    /// after an online sign-in it has already fetched what the user's other devices sent.
    public func login(email: String, password: String) async throws -> SignIn {
        let session: Session, online: Bool
        do {
            (session, online) = try await accounts.signIn(email: email, password: password)
        } catch let error as AccountError {
            throw PantryError(error)
        }
        let pantry = try UserPantry(session: session, app: self)
        await pantry.analytics.record(.login)
        let report = online ? await pantry.engine.syncNow() : nil
        return SignIn(pantry: pantry, online: online, pulled: report?.pulled ?? 0)
    }

    /// The user signed in on this device, if any (their session may be locked).
    public func whoami() throws -> Account? {
        try accounts.whoami().map { Account(id: $0.id, username: $0.username, email: $0.email) }
    }

    /// The signed-in user's pantry, resuming the saved sign-in.
    public func open() throws -> UserPantry {
        guard let session = try accounts.resume() else { throw PantryError.notSignedIn }
        return try UserPantry(session: session, app: self)
    }

    /// Signs out and removes the user's data from this device. Refused while changes wait to be
    /// sent or were refused by the server, unless `discarding` says which may be lost. Offline,
    /// the token's revocation is queued and sent by the next command that reaches the server.
    @discardableResult
    public func logout(discarding: SignOutDiscard) async throws -> SignOut {
        do {
            let outcome = try await accounts.signOut(discarding: discarding)
            return SignOut(username: outcome.username, discardedWaiting: outcome.discardedWaiting,
                           discardedRefused: outcome.discardedRefused, revocationQueued: outcome.revocationQueued)
        } catch let error as AccountError {
            throw PantryError(error)
        }
    }

    /// Signs out; with `force`, whatever has not reached the server is lost.
    @discardableResult
    public func logout(force: Bool = false) async throws -> SignOut {
        try await logout(discarding: force ? .everything : .nothing)
    }

    /// Revokes an access token on the server; an already refused token counts as revoked.
    @Sendable func revoke(_ token: String) async throws {
        try await accounts.revoke(token)
    }

    private static func outboxCounts(userID: String, configuration: PantryConfiguration) throws -> OutboxCounts {
        let path = configuration.databasePath(userID)
        guard FileManager.default.fileExists(atPath: path) else { return OutboxCounts() }
        let store = try LocalStore(path: path, migrations: PantrySchema.migrations)
        return try Outbox(store: store).counts()
    }

    static func reason(_ error: any Error) -> String {
        RemoteFailure.from(error).description
    }
}

extension PantryError {
    init(_ error: AccountError) {
        switch error {
        case .notSignedIn: self = .notSignedIn
        case .unreachable(let reason): self = .unreachable(reason)
        case .refused(let message): self = .server(message)
        }
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
    /// Changes that were still waiting to be sent, lost.
    public let discardedWaiting: Int
    /// Changes the server had refused, dropped.
    public let discardedRefused: Int
    /// Every change that never reached the server.
    public var discarded: Int { discardedWaiting + discardedRefused }
    /// The server has not heard of the sign-out yet; it will at the next chance.
    public let revocationQueued: Bool
}
