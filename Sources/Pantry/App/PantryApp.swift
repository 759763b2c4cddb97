import EventualAPI
import EventualKit
import Foundation

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
        accounts = DeviceAccounts(configuration: configuration.device, app: .pantry)
    }

    public var vault: SessionVault { accounts.vault }

    /// Creates an account on the server (registering needs the network).
    public func register(username: String, email: String, password: String) async throws -> DeviceAccount {
        try await AccountError.spoken(as: PantryError.init) { try await accounts.register(username: username, email: email, password: password) }
    }

    /// Signs in through the server, or, when it cannot be reached, with the password checked
    /// on this device (for 7 days after the last online sign-in). Returns the user's pantry;
    /// after an online sign-in it has already fetched what the user's other devices sent (a first
    /// sync on a new device), through `fetching`: a command draws its progress around it.
    public func login(email: String, password: String,
                      fetching: @Sendable (SyncEngine, @Sendable () async -> SyncReport) async -> SyncReport = { await $1() }) async throws
        -> SignIn {
        let (session, online) = try await AccountError.spoken(as: PantryError.init) { try await accounts.signIn(email: email, password: password) }
        let pantry = try UserPantry(session: session, app: self)
        await pantry.analytics.record(.login)
        let engine = pantry.engine
        let report = online ? await fetching(engine) { await engine.syncNow() } : nil
        return SignIn(pantry: pantry, online: online, pulled: report?.pulled ?? 0, fetchStopped: report?.failure)
    }

    /// The user signed in on this device, if any (their session may be locked).
    public func whoami() throws -> DeviceAccount? { try accounts.whoami() }

    /// Confirms the email (`email`, else the signed-in person's) with the code the server mailed:
    /// household invitations sent to that address show once it is confirmed.
    public func verify(code: String, email: String? = nil) async throws {
        let address = try email ?? emailOfSignedIn()
        try await AccountError.spoken(as: PantryError.init) { try await accounts.verifyEmail(code: code, email: address) }
    }

    /// Asks the server to mail a new code to `email` (else the signed-in person's).
    public func resendCode(email: String? = nil) async throws -> String {
        let address = try email ?? emailOfSignedIn()
        try await AccountError.spoken(as: PantryError.init) { try await accounts.requestVerificationCode(email: address) }
        return address
    }

    private func emailOfSignedIn() throws -> String {
        guard let account = try accounts.whoami() else { throw PantryError.notSignedIn }
        return account.email
    }

    /// The signed-in user's pantry, resuming the saved sign-in.
    public func open() throws -> UserPantry {
        guard let session = try accounts.resume() else {
            // NB: a saved sign-in that no longer resumes is still the person's (whoami names them).
            if let account = try accounts.whoami() { throw PantryError.signInAgain(email: account.email) }
            throw PantryError.notSignedIn
        }
        return try UserPantry(session: session, app: self)
    }

    /// Signs out and removes the user's data from this device. Refused while changes wait to be
    /// sent or were refused by the server, unless `discarding` says which may be lost. Offline,
    /// the token's revocation is queued and sent by the next command that reaches the server.
    @discardableResult
    public func logout(discarding: SignOutDiscard) async throws -> DeviceSignOut {
        try await AccountError.spoken(as: PantryError.init) { try await accounts.signOut(discarding: discarding) }
    }

    /// Signs out; with `force`, whatever has not reached the server is lost.
    @discardableResult
    public func logout(force: Bool = false) async throws -> DeviceSignOut {
        try await logout(discarding: force ? .everything : .nothing)
    }
}

extension PantryError {
    /// An account's refusal in the pantry's words.
    init(_ error: AccountError) {
        switch error {
        case .notSignedIn: self = .notSignedIn
        case .unreachable(let reason): self = .unreachable(reason)
        // NB: a 400 refuses what was typed (a short password, a malformed email), as SpendiQ says it.
        case .invalid(let message): self = .invalidField(message.prefix(1).uppercased() + message.dropFirst())
        default: self = .server(error.description)
        }
    }
}

/// The outcome of a sign-in.
public struct SignIn: Sendable {
    public let pantry: UserPantry
    /// False when the server could not be reached and the password was checked on this device.
    public let online: Bool
    /// Records fetched from the user's other devices.
    public let pulled: Int
    /// Why fetching them stopped before the end (the rest comes with the next sync); nil when it did not.
    public var fetchStopped: RemoteFailure? = nil
}
