import EventualAPI
import EventualKit
import Foundation
import GRDB

/// SpendiQ on one device: accounts (register, verify the email, sign in online or offline, sign
/// out), the 7-day rule, and the signed-in person's data. Only one person's data lives on a
/// device, in its own database file under the data directory.
public final class SpendingApp: Sendable {
    /// The app's version, as its usage events carry it.
    public static let version = "1.0.0"
    public let configuration: SpendingConfiguration
    public let vault: SessionVault
    let link: ServerLink

    public init(configuration: SpendingConfiguration) {
        self.configuration = configuration
        let vault = SessionVault(secrets: FileSecretStore(directory: configuration.secretsDirectory),
                                 maxOfflineAge: configuration.maxOfflineAge, rounds: configuration.passwordRounds,
                                 wallClock: configuration.clock)
        self.vault = vault
        link = ServerLink(serverURL: configuration.serverURL, timeout: configuration.requestTimeout,
                          timeouts: configuration.timeouts) { vault.accessToken }
    }

    private var offlineDays: Int { Int(configuration.maxOfflineAge.components.seconds / 86_400) }

    // MARK: - Registration and verification

    /// Creates an account on the server (needs the network); the server mails a 6-digit code.
    public func register(username: String, email: String, password: String) async throws -> Account {
        let answer: Operations.Register.Output
        do {
            answer = try await link.client.register(body: .json(.init(username: username, email: email, password: password, app: .spendiq)))
        } catch {
            throw SpendingError.unreachable(RemoteFailure.from(error).description)
        }
        switch answer {
        case .created(let created):
            await flushRevocations()
            let user = try created.body.json
            // NB: remembered so that `verify CODE` needs no --email; losing it only means typing the email.
            try? FileManager.default.createDirectory(at: configuration.dataDirectory, withIntermediateDirectories: true)
            try? Data(user.email.utf8).write(to: configuration.pendingVerificationFile, options: .atomic)
            return Account(id: user.id, username: user.username, email: user.email)
        // NB: a 400 refuses what was typed (a short password, a malformed email): a usage mistake, said as a sentence.
        case .badRequest(let answer): throw SpendingError.invalidField(Self.sentence(try answer.body.json.message))
        case .conflict(let answer): throw SpendingError.server(try answer.body.json.message)
        case .unprocessableContent(let answer): throw SpendingError.server(try answer.body.json.message)
        case .undocumented(let status, _): throw SpendingError.server("Registering failed (HTTP \(status))")
        }
    }

    /// "password must be…" as a sentence: "Password must be…".
    private static func sentence(_ message: String) -> String {
        message.prefix(1).uppercased() + message.dropFirst()
    }

    /// Confirms the email with the mailed code; `email` defaults to the last registration on this device.
    public func verify(code: String, email: String? = nil) async throws {
        // NB: "884 723", as a mail's code is often copied.
        let trimmed = code.filter { !$0.isWhitespace }
        guard trimmed.count == 6, trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw SpendingError.invalidField("The code is the 6 digits of the mail, like 042917")
        }
        let address = try email ?? pendingRegistration()
        let answer: Operations.VerifyEmail.Output
        do {
            answer = try await link.client.verifyEmail(body: .json(.init(email: address, code: trimmed)))
        } catch {
            throw SpendingError.unreachable(RemoteFailure.from(error).description)
        }
        switch answer {
        case .noContent:
            await flushRevocations()
            try? FileManager.default.removeItem(at: configuration.pendingVerificationFile)
        case .badRequest(let answer): throw SpendingError.server(try answer.body.json.message)
        case .undocumented(let status, _): throw SpendingError.server("Verifying failed (HTTP \(status))")
        }
    }

    /// Asks the server to mail a new code (the previous one stops working).
    public func resendCode(email: String? = nil) async throws {
        let address = try email ?? pendingRegistration()
        let answer: Operations.SendVerificationCode.Output
        do {
            answer = try await link.client.sendVerificationCode(body: .json(.init(email: address)))
        } catch {
            throw SpendingError.unreachable(RemoteFailure.from(error).description)
        }
        switch answer {
        case .accepted: await flushRevocations()
        case .badRequest(let answer): throw SpendingError.server(try answer.body.json.message)
        case .undocumented(let status, _): throw SpendingError.server("Asking for a code failed (HTTP \(status))")
        }
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
    /// is here). An online sign-in needs a verified email.
    public func login(email: String, password: String) async throws -> SpendingSignIn {
        let now = configuration.clock()
        var staleWithPending = 0
        if let saved = try vault.saved(), now - saved.lastOnlineSignInAt > configuration.maxOfflineAge.milliseconds {
            let pending = try pendingCount(userID: saved.userID)
            if pending == 0 { try await wipe(saved) } else { staleWithPending = pending }
        }
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
            guard case .unreachable = RemoteFailure.from(error) else { throw SpendingError.server(RemoteFailure.from(error).description) }
            if staleWithPending > 0 {
                throw SpendingError.offlineTooLongWithPendingChanges(days: offlineDays, count: staleWithPending, email: email)
            }
            if let previous, previous.email.lowercased() != email.lowercased() {
                throw SpendingError.otherPersonOnDevice(username: previous.username)
            }
            session = try await vault.unlockOffline(email: email, password: password)
            online = false
        }
        if let previous, previous.userID != session.userID {
            try? FileManager.default.removeItem(at: configuration.userDirectory(previous.userID))
        }
        if online, case .forbidden? = try? await link.client.getSpendingAccount() {
            try await vault.signOut(revoke: revoke)
            throw SpendingError.notVerified
        }
        let spending = try UserSpending(session: session, app: self)
        await spending.analytics.record(.login)
        try await spending.recordStart()
        var pulled = 0
        if online {
            try? await vault.flushRevocations(revoke: revoke)
            pulled = await spending.engine.syncNow().pulled
        }
        return SpendingSignIn(spending: spending, online: online, pulled: pulled)
    }

    /// The person signed in on this device, if any. The 7-day rule applies here too: past it, the
    /// device's data is wiped (or, while changes wait, the person is told to go online).
    public func whoami() async throws -> Account? {
        guard let saved = try vault.saved() else { return nil }
        try await enforceOfflineAge(saved)
        return Account(id: saved.userID, username: saved.username, email: saved.email)
    }

    /// After 7 days without an online sign-in: wipes the device's data and says so, unless changes
    /// still wait for the server (then the person is told to go online).
    private func enforceOfflineAge(_ saved: Session) async throws {
        guard configuration.clock() - saved.lastOnlineSignInAt > configuration.maxOfflineAge.milliseconds else { return }
        let pending = try pendingCount(userID: saved.userID)
        guard pending == 0 else {
            throw SpendingError.offlineTooLongWithPendingChanges(days: offlineDays, count: pending, email: saved.email)
        }
        try await wipe(saved)
        throw SpendingError.wipedAfterOfflineAge(days: offlineDays)
    }

    /// The signed-in person's data, resuming the saved sign-in. Every start records "last seen".
    /// After 7 days without an online sign-in the device's data is wiped here, unless changes
    /// still wait for the server: then the person is told to go online.
    public func open() async throws -> UserSpending {
        guard let saved = try vault.saved() else { throw SpendingError.notSignedIn }
        try await enforceOfflineAge(saved)
        guard let session = try vault.resume() else { throw SpendingError.notSignedIn }
        let spending = try UserSpending(session: session, app: self)
        try await spending.recordStart()
        return spending
    }

    /// Signs out and removes the person's data from this device. Refused while changes wait to be
    /// sent or were refused by the server, unless the person chose to lose them: `.failed` drops
    /// only the refused ones, `.everything` all. Waiting changes are sent first when the server answers.
    @discardableResult
    public func logout(discarding: SignOutDiscard = .nothing) async throws -> SignOut {
        guard let session = try vault.saved() else { throw SpendingError.notSignedIn }
        var counts = try unsentCounts(userID: session.userID)
        if counts.waiting > 0, let resumed = try? vault.resume(), let spending = try? UserSpending(session: resumed, app: self) {
            await spending.trySend()
            counts = try unsentCounts(userID: session.userID)
        }
        switch discarding {
        case .nothing where counts.waiting > 0 || counts.refused > 0, .failed where counts.waiting > 0:
            throw SessionError.unsentChanges(waiting: counts.waiting, refused: counts.refused)
        default: break
        }
        try await vault.signOut(revoke: revoke)
        try? FileManager.default.removeItem(at: configuration.userDirectory(session.userID))
        return SignOut(username: session.username, discardedWaiting: counts.waiting, discardedRefused: counts.refused,
                       revocationQueued: !(try vault.pendingRevocations()).isEmpty)
    }

    /// Signs out; with `force`, whatever has not reached the server is lost.
    @discardableResult
    public func logout(force: Bool) async throws -> SignOut {
        try await logout(discarding: force ? .everything : .nothing)
    }

    /// The person's changes not on the server: waiting to be sent, and refused by it.
    private func unsentCounts(userID: String) throws -> (waiting: Int, refused: Int) {
        let path = configuration.databasePath(userID)
        guard FileManager.default.fileExists(atPath: path) else { return (0, 0) }
        let entries = try Outbox(store: try LocalStore(path: path, migrations: SpendingSchema.migrations)).entries()
            .filter { $0.operation != SpendingCalls.lastSeen && $0.operation != SpendingCalls.location }
        let refused = entries.filter { $0.state == .failed }.count
        return (entries.count - refused, refused)
    }

    /// Removes a person's data and saved sign-in from this device (the server keeps everything).
    private func wipe(_ session: Session) async throws {
        try? FileManager.default.removeItem(at: configuration.userDirectory(session.userID))
        // NB: the token is 7 days old or more: the server refuses it already; nothing to revoke.
        try await vault.signOut(revoke: { _ in })
    }

    /// Sends the sign-outs this device made offline, now that the server answered a command
    /// (signed in or not): a token stays valid on the server until then.
    func flushRevocations() async {
        guard let waiting = try? vault.pendingRevocations(), !waiting.isEmpty else { return }
        try? await vault.flushRevocations(revoke: revoke)
    }

    /// Revokes an access token on the server; an already refused token counts as revoked.
    @Sendable func revoke(_ token: String) async throws {
        let link = ServerLink(serverURL: configuration.serverURL, timeout: configuration.requestTimeout, timeouts: configuration.timeouts) { token }
        switch try await link.client.logout() {
        case .noContent, .unauthorized: return
        case .undocumented(let status, _): throw RemoteFailure.status(status, message: "sign-out failed (HTTP \(status))")
        }
    }

    private func pendingCount(userID: String, ignoringLastSeen: Bool = true) throws -> Int {
        let path = configuration.databasePath(userID)
        guard FileManager.default.fileExists(atPath: path) else { return 0 }
        let store = try LocalStore(path: path, migrations: SpendingSchema.migrations)
        // NB: "last seen" and the position are recorded by every start: they are not the person's
        // work, and a wipe or another person's sign-in must not wait for them.
        let entries = try Outbox(store: store).entries()
        return entries.filter { !ignoringLastSeen || ($0.operation != SpendingCalls.lastSeen && $0.operation != SpendingCalls.location) }.count
    }
}

/// A person as the server knows them.
public struct Account: Sendable, Equatable, Codable {
    public let id: String
    public let username: String
    public let email: String
}

/// The outcome of a sign-in.
public struct SpendingSignIn: Sendable {
    public let spending: UserSpending
    /// False when the server could not be reached and the password was checked on this device.
    public let online: Bool
    /// Records fetched from the person's other devices.
    public let pulled: Int
}

/// The outcome of a sign-out.
public struct SignOut: Sendable, Equatable {
    public let username: String
    /// Changes that were waiting to be sent, lost.
    public let discardedWaiting: Int
    /// Changes the server had refused, dropped.
    public let discardedRefused: Int
    public let revocationQueued: Bool
}
