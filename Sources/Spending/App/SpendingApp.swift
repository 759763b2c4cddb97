import EventualAPI
import EventualKit
import Foundation

/// SpendiQ on one device: accounts (register, verify the email, sign in online or offline, sign
/// out), the 7-day rule, and the signed-in person's data. Only one person's data lives on a
/// device, in its own database file under the data directory.
public final class SpendingApp: Sendable {
    /// The app's version, as its usage events carry it.
    public static let version = "1.0.0"
    public let configuration: SpendingConfiguration
    public let accounts: DeviceAccounts

    public init(configuration: SpendingConfiguration) {
        self.configuration = configuration
        accounts = DeviceAccounts(configuration: configuration.device, app: .spendiQ)
    }

    public var vault: SessionVault { accounts.vault }
    var link: ServerLink { accounts.link }

    // MARK: - Registration and verification

    /// Creates an account on the server (needs the network); the server mails a 6-digit code.
    public func register(username: String, email: String, password: String) async throws -> DeviceAccount {
        let account = try await AccountError.spoken(as: SpendingError.init) { try await accounts.register(username: username, email: email, password: password) }
        // NB: remembered so that `verify CODE` needs no --email; losing it only means typing the email.
        try? FileManager.default.createDirectory(at: configuration.dataDirectory, withIntermediateDirectories: true)
        try? Data(account.email.utf8).write(to: configuration.pendingVerificationFile, options: .atomic)
        return account
    }

    /// Confirms the email with the mailed code; `email` defaults to the last registration on this device.
    public func verify(code: String, email: String? = nil) async throws {
        let address = try email ?? pendingRegistration()
        try await AccountError.spoken(as: SpendingError.init) { try await accounts.verifyEmail(code: code, email: address) }
        try? FileManager.default.removeItem(at: configuration.pendingVerificationFile)
    }

    /// Asks the server to mail a new code (the previous one stops working).
    public func resendCode(email: String? = nil) async throws {
        let address = try email ?? pendingRegistration()
        try await AccountError.spoken(as: SpendingError.init) { try await accounts.requestVerificationCode(email: address) }
    }

    /// The email of the registration on this device that waits for its code.
    public func pendingRegistration() throws -> String {
        guard let data = try? Data(contentsOf: configuration.pendingVerificationFile),
              let email = String(data: data, encoding: .utf8), !email.isEmpty else { throw SpendingError.noPendingRegistration }
        return email
    }

    // MARK: - Signing in and out

    /// Signs in through the server, or, when it cannot be reached, with the password checked on
    /// this device (for 7 days after the last online sign-in, and only for the person whose data
    /// is here). An online sign-in needs a verified email. After it, the device fetches what the
    /// person's other devices sent (a first sync on a new device), through `fetching`: a command
    /// draws its progress around it.
    public func login(email: String, password: String,
                      fetching: @Sendable (SyncEngine, @Sendable () async -> SyncReport) async -> SyncReport = { await $1() }) async throws
        -> SpendingSignIn {
        let (session, online) = try await AccountError.spoken(as: SpendingError.init) { try await accounts.signIn(email: email, password: password) }
        let spending = try UserSpending(session: session, app: self)
        await spending.analytics.record(.login)
        try await spending.recordStart()
        let engine = spending.engine
        let report = online ? await fetching(engine) { await engine.syncNow() } : nil
        return SpendingSignIn(spending: spending, online: online, pulled: report?.pulled ?? 0, fetchStopped: report?.failure)
    }

    /// The person signed in on this device, if any. The 7-day rule applies here too: past it, the
    /// device's data is wiped (or, while changes wait, the person is told to go online).
    public func whoami() async throws -> DeviceAccount? {
        try await AccountError.spoken(as: SpendingError.init) { try await accounts.enforceOfflineAge() }
        return try accounts.whoami()
    }

    /// The signed-in person's data, resuming the saved sign-in. Every start records "last seen".
    /// After 7 days without an online sign-in the device's data is wiped here, unless changes
    /// still wait for the server: then the person is told to go online.
    public func open() async throws -> UserSpending {
        guard try accounts.whoami() != nil else { throw SpendingError.notSignedIn }
        try await AccountError.spoken(as: SpendingError.init) { try await accounts.enforceOfflineAge() }
        guard let session = try accounts.resume() else { throw SpendingError.notSignedIn }
        let spending = try UserSpending(session: session, app: self)
        try await spending.recordStart()
        return spending
    }

    /// Signs out and removes the person's data from this device. Refused while changes wait to be
    /// sent or were refused by the server, unless the person chose to lose them: `.failed` drops
    /// only the refused ones, `.everything` all. Waiting changes are sent first when the server answers.
    @discardableResult
    public func logout(discarding: SignOutDiscard = .nothing) async throws -> DeviceSignOut {
        if let session = try? accounts.resume(), (try accounts.unsentCounts(session.userID)).pending > 0,
           let spending = try? UserSpending(session: session, app: self) {
            await spending.trySend()
        }
        return try await AccountError.spoken(as: SpendingError.init) { try await accounts.signOut(discarding: discarding) }
    }
}

extension SpendingError {
    /// An account's refusal in SpendiQ's words.
    init(_ error: AccountError) {
        switch error {
        case .notSignedIn: self = .notSignedIn
        case .unreachable(let reason): self = .unreachable(reason)
        // NB: a 400 refuses what was typed (a short password, a malformed email): a usage mistake, said as a sentence.
        case .invalid(let message): self = .invalidField(message.prefix(1).uppercased() + message.dropFirst())
        case .refused(let message): self = .server(message)
        case .offlineTooLong(let days, let waiting, let email): self = .offlineTooLongWithPendingChanges(days: days, count: waiting, email: email)
        case .wipedAfterOfflineAge(let days): self = .wipedAfterOfflineAge(days: days)
        case .otherPersonOnDevice(let username): self = .otherPersonOnDevice(username: username)
        case .notAdmitted: self = .notVerified
        }
    }
}

/// The outcome of a sign-in.
public struct SpendingSignIn: Sendable {
    public let spending: UserSpending
    /// False when the server could not be reached and the password was checked on this device.
    public let online: Bool
    /// Records fetched from the person's other devices.
    public let pulled: Int
    /// Why fetching them stopped before the end (the rest comes with the next sync); nil when it did not.
    public var fetchStopped: RemoteFailure? = nil
}
