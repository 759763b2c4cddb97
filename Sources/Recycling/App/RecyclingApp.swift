import EventualAPI
import EventualKit
import Foundation

/// SustainU on one device: accounts (register, sign in online or offline, sign out, who am I)
/// and the signed-in person's recycling. One person's data lives on a device at a time.
public final class RecyclingApp: Sendable {
    /// The app's version, as its usage events carry it.
    public static let version = "1.0.0"
    public let configuration: RecyclingConfiguration
    public let accounts: DeviceAccounts
    /// For scans sent by the sync engine: the server may wait up to 20 s for its vision model.
    let scanLink: ServerLink

    public init(configuration: RecyclingConfiguration) {
        self.configuration = configuration
        let accounts = DeviceAccounts(configuration: configuration.device, app: .sustainU)
        self.accounts = accounts
        scanLink = ServerLink(serverURL: configuration.serverURL, timeout: configuration.scanTimeouts.firstByte + .seconds(10),
                              timeouts: configuration.scanTimeouts) { accounts.vault.accessToken }
    }

    /// Creates an account on the server (registering needs the network).
    public func register(username: String, email: String, password: String) async throws -> DeviceAccount {
        try await accounts.register(username: username, email: email, password: password)
    }

    /// Signs in through the server, or without it for 7 days after the last online sign-in.
    /// Online, it also loads the points, the packaging catalogue and the tips, so that they work
    /// offline from then on.
    public func login(email: String, password: String) async throws -> SignedIn {
        let (session, online) = try await accounts.signIn(email: email, password: password)
        let recycling = try UserRecycling(session: session, app: self)
        await recycling.analytics.record(.login)
        var loaded = false
        if online {
            await recycling.device.trySend()
            loaded = (try? await withTimeLimit(.seconds(20)) { try await recycling.refreshCatalogues() }) != nil
        }
        return SignedIn(recycling: recycling, online: online, catalogueLoaded: loaded)
    }

    public func whoami() throws -> DeviceAccount? { try accounts.whoami() }

    /// The signed-in person's recycling, resuming the saved sign-in.
    public func open() throws -> UserRecycling {
        guard let session = try accounts.resume() else {
            // NB: a saved sign-in that no longer resumes is still the person's (whoami names them).
            if let account = try accounts.whoami() { throw RecyclingError.signInAgain(email: account.email) }
            throw RecyclingError.notSignedIn
        }
        return try UserRecycling(session: session, app: self)
    }

    /// Signs out and removes the person's data from this device (offline too: the server hears
    /// of it later). Refused while scans or visits wait to be sent or were refused by the server,
    /// unless `discarding` says which may go. What waits is first sent if the server answers at once.
    public func logout(discarding: SignOutDiscard = .nothing) async throws -> DeviceSignOut {
        if let recycling = try? open() { await recycling.catchUp() }
        // NB: a sign-out works offline and tells the server later; it does not wait on a silent one.
        return try await accounts.signOut(discarding: discarding, revokingWithin: configuration.localCommandSyncBudget)
    }
}

/// The outcome of a sign-in.
public struct SignedIn: Sendable {
    public let recycling: UserRecycling
    /// False when the server could not be reached and the password was checked on this device.
    public let online: Bool
    /// The points, packaging catalogue and tips were loaded for offline use.
    public let catalogueLoaded: Bool
}
