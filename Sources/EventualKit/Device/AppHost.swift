import Foundation

/// An app's signed-in person, as its host (`AppHost`) builds them: around a resumed session,
/// with the device every app has, and the few hooks where apps differ.
public protocol AppUser: AnyObject, Sendable {
    associatedtype Configuration: AppConfiguration
    /// The app to the device layer: its registration, tables, outbox words and account rules.
    static var deviceApp: DeviceApp { get }
    /// An account's refusal in the app's words (by default, as the engine says it).
    static func speak(_ error: AccountError) -> any Error
    /// The person's data on this device, around their session.
    init(session: Session, host: AppHost<Self>) throws
    var device: SignedInDevice { get }
    /// Each time the app opens for the person, after a sign-in too (SpendiQ records a visit).
    func opened() async throws
    /// After an online sign-in and its first sync: what the app loads for use offline (SustainU:
    /// the points, the packaging catalogue and the tips); false when it could not.
    func prepareForOffline() async -> Bool
}

extension AppUser {
    // The device's parts an app's features use, named on the person as every app names them.
    public var session: Session { device.session }
    public var store: LocalStore { device.store }
    public var engine: SyncEngine { device.engine }
    public var analytics: Analytics { device.analytics }
    public var outbox: Outbox { device.outbox }
    /// Photos and receipts: kept here, uploaded through the outbox, read local first.
    public var attachments: Attachments { device.attachments }

    public static func speak(_ error: AccountError) -> any Error { error }
    public func opened() async throws {}
    public func prepareForOffline() async -> Bool { true }
}

/// An app on one device, the same for every app: register and confirm the email, sign in online
/// or offline (with a first sync), who am I, open the signed-in person's data, sign out. One
/// person's data lives on a device at a time, in its own database file under the data
/// directory. An app is `AppHost<ItsUser>`: it supplies its user type, whose hooks and
/// `DeviceApp` say where it differs, and its configuration.
public final class AppHost<User: AppUser>: Sendable {
    public let configuration: User.Configuration
    public let accounts: DeviceAccounts

    public init(configuration: User.Configuration) {
        self.configuration = configuration
        accounts = DeviceAccounts(configuration: configuration.device, app: User.deviceApp)
    }

    public var vault: SessionVault { accounts.vault }
    public var link: ServerLink { accounts.link }

    // MARK: - Registration and verification

    /// Creates an account on the server (registering needs the network). One account serves
    /// every app of the platform: an email already registered (in another app too) signs in.
    /// The address is remembered until its code is typed, so that `verify` needs no email.
    public func register(username: String, email: String, password: String) async throws -> DeviceAccount {
        let account = try await spoken { try await accounts.register(username: username, email: email, password: password) }
        rememberForVerification(account.email)
        return account
    }

    /// Remembers `email` as the one `verify` confirms when none is given.
    private func rememberForVerification(_ email: String) {
        // NB: losing the remembered address only means typing the email with the code.
        try? FileManager.default.createDirectory(at: configuration.device.dataDirectory, withIntermediateDirectories: true)
        try? Data(email.utf8).write(to: pendingVerificationFile, options: .atomic)
    }

    /// Confirms an email with the 6-digit code the server mailed: `email`, else the registration
    /// waiting for its code on this device, else the signed-in person's.
    public func verify(code: String, email: String? = nil) async throws {
        let address = try email ?? emailToVerify()
        try await spoken { try await accounts.verifyEmail(code: code, email: address) }
        if pendingRegistration()?.lowercased() == address.lowercased() { try? FileManager.default.removeItem(at: pendingVerificationFile) }
    }

    /// Asks the server to mail a new code (the previous one stops working) to `email`, or as
    /// `verify` chooses it; returns the address.
    @discardableResult
    public func resendCode(email: String? = nil) async throws -> String {
        let address = try email ?? emailToVerify()
        try await spoken { try await accounts.requestVerificationCode(email: address) }
        return address
    }

    /// The email of the registration on this device that waits for its code, if any.
    public func pendingRegistration() -> String? {
        guard let data = try? Data(contentsOf: pendingVerificationFile), let email = String(data: data, encoding: .utf8),
              !email.isEmpty else { return nil }
        return email
    }

    private var pendingVerificationFile: URL { configuration.device.dataDirectory.appendingPathComponent("pending-verification") }

    private func emailToVerify() throws -> String {
        if let pending = pendingRegistration() { return pending }
        if let account = try accounts.whoami() { return account.email }
        throw User.speak(.noEmailToVerify)
    }

    // MARK: - Signing in and out

    /// Signs in through the server or, when it cannot be reached, with the password checked on
    /// this device (for the offline age after the last online sign-in, as the app's policy
    /// allows). After an online sign-in the device fetches what the person's other devices sent
    /// (a first sync on a new device), through `fetching`: a command draws its progress around it,
    /// and then loads what the app needs offline (`AppUser.prepareForOffline`).
    public func login(email: String, password: String,
                      fetching: @Sendable (SyncEngine, @Sendable () async -> SyncReport) async -> SyncReport = { await $1() })
        async throws -> AppSignIn<User> {
        let (session, online) = try await spoken {
            do {
                return try await accounts.signIn(email: email, password: password)
            } catch AccountError.notAdmitted {
                // NB: an account registered in another app, its email never confirmed: `verify`
                // (and `verify --resend`) then need no --email the sign-in was just given.
                rememberForVerification(email)
                throw AccountError.notAdmitted
            }
        }
        let user = try User(session: session, host: self)
        let device = user.device
        await device.analytics.record(.login)
        try await user.opened()
        guard online else { return AppSignIn(user: user, online: false) }
        let report = await fetching(device.engine) { await device.sync() }
        return AppSignIn(user: user, online: true, pulled: report.pulled, fetchStopped: report.failure,
                         preparedForOffline: await user.prepareForOffline())
    }

    /// The person signed in on this device, if any (their session may be locked). Where the app's
    /// policy wipes a device after the offline age, it applies here too.
    public func whoami() async throws -> DeviceAccount? {
        try await spoken {
            try await accounts.enforceOfflineAge()
            return try accounts.whoami()
        }
    }

    /// The signed-in person's data, resuming the saved sign-in (`AppUser.opened` runs each time).
    /// Where the app's policy says so, past the offline age the device's data is wiped here,
    /// unless changes still wait for the server: then the person is told to go online.
    public func open() async throws -> User {
        let session = try await spoken {
            try await accounts.enforceOfflineAge()
            guard let session = try accounts.resume() else {
                // NB: a saved sign-in that no longer resumes is still the person's (whoami names them).
                if let account = try accounts.whoami() { throw AccountError.signInAgain(email: account.email) }
                throw AccountError.notSignedIn
            }
            return session
        }
        let user = try User(session: session, host: self)
        try await user.opened()
        return user
    }

    /// Signs out and removes the person's data from this device, offline too (the server hears
    /// of it later). What waits is first sent if the server answers at once
    /// (`DeviceConfiguration.signOutSendBudget`). Refused while the person's changes still wait
    /// or were refused by the server, unless `discarding` says which may be lost: `.failed` only
    /// the refused ones, `.everything` all.
    @discardableResult
    public func logout(discarding: SignOutDiscard = .nothing) async throws -> DeviceSignOut {
        if let session = try? accounts.resume(), ((try? accounts.unsentCounts(session.userID).pending) ?? 0) > 0,
           let user = try? User(session: session, host: self) {
            await user.device.sync(.patient(configuration.device.signOutSendBudget), pull: false)
        }
        // NB: a sign-out works offline and tells the server later; it does not wait on a silent one.
        return try await spoken {
            try await accounts.signOut(discarding: discarding, revokingWithin: configuration.device.localCommandSyncBudget)
        }
    }

    private func spoken<T>(_ body: () async throws -> T) async throws -> T {
        try await AccountError.spoken(as: User.speak, body)
    }
}

/// The outcome of a sign-in.
public struct AppSignIn<User: AppUser>: Sendable {
    /// The person's data on this device.
    public let user: User
    /// False when the server could not be reached and the password was checked on this device.
    public let online: Bool
    /// Records fetched from other devices (the person's, and their spaces' other members').
    public var pulled = 0
    /// Why fetching them stopped before the end (the rest comes with the next sync); nil when it did not.
    public var fetchStopped: RemoteFailure? = nil
    /// What the app needs offline was loaded (`AppUser.prepareForOffline`); false offline.
    public var preparedForOffline = false
}
