import EventualAPI
import Foundation
import GRDB

/// The accounts side of an app on one device, the same for every app and its only way to
/// register and sign in: register (online only), sign in online or, for a while after the last
/// online sign-in, offline; who am I; sign out, offline too (the token's revocation waits). One
/// person's data lives on a device at a time, in a folder of their own that sign-out and a
/// sign-in as someone else remove. What differs between apps is their `AccountPolicy`.
public struct DeviceAccounts: Sendable {
    public let vault: SessionVault
    /// The app's link to the server: it sends the sign-outs that wait whenever the server answers.
    public let link: ServerLink
    public let configuration: DeviceConfiguration
    public let app: DeviceApp
    private var policy: AccountPolicy { app.policy }

    public init(configuration: DeviceConfiguration, app: DeviceApp) {
        self.configuration = configuration
        self.app = app
        let vault = SessionVault(secrets: FileSecretStore(directory: configuration.secretsDirectory),
                                 maxOfflineAge: configuration.maxOfflineAge, rounds: configuration.passwordRounds,
                                 wallClock: configuration.clock)
        self.vault = vault
        let (serverURL, timeout, timeouts) = (configuration.serverURL, configuration.requestTimeout, configuration.timeouts)
        let revocations = RevocationMiddleware(vault: vault) { token in
            try await Self.revoke(token, serverURL: serverURL, timeout: timeout, timeouts: timeouts)
        }
        link = ServerLink(serverURL: serverURL, timeout: timeout, timeouts: timeouts, middlewares: [revocations]) { vault.accessToken }
    }

    /// Creates an account on the server (the server mails a verification code only to the apps
    /// that need one).
    public func register(username: String, email: String, password: String) async throws -> DeviceAccount {
        let answer: Operations.Register.Output
        do {
            answer = try await link.client.register(body: .json(.init(username: username, email: email, password: password, app: app.name)))
        } catch {
            throw AccountError.unreachable(RemoteFailure.from(error).description)
        }
        switch answer {
        case .created(let created):
            let user = try created.body.json
            return DeviceAccount(id: user.id, username: user.username, email: user.email)
        case .badRequest(let answer): throw AccountError.invalid(try answer.body.json.message)
        case .notFound(let answer): throw AccountError.refused(try answer.body.json.message)
        case .conflict(let answer):
            let message = try answer.body.json.message
            // NB: one account serves every app: an email registered from another app is a sign-in, not a refusal.
            throw message.hasPrefix("email") ? AccountError.emailAlreadyRegistered(email) : AccountError.refused(message)
        case .unprocessableContent(let answer): throw AccountError.refused(try answer.body.json.message)
        case .contentTooLarge(let answer): throw AccountError.refused(try answer.body.json.message)
        case .tooManyRequests(let answer): throw AccountError.refused(try answer.body.json.message)
        case .unsupportedMediaType(let answer): throw AccountError.invalid(try answer.body.json.message)
        case .undocumented(let status, let payload): throw AccountError.refused(await remoteFailure(status, payload).description)
        }
    }

    /// Confirms `email` with the 6-digit code the server mailed to it ("884 723" as a mail's code is
    /// often copied is read as 884723).
    public func verifyEmail(code: String, email: String) async throws {
        let digits = code.filter { !$0.isWhitespace }
        guard digits.count == 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw AccountError.invalid("The code is the 6 digits of the mail, like 042917")
        }
        let answer: Operations.VerifyEmail.Output
        do {
            answer = try await link.client.verifyEmail(body: .json(.init(email: email, code: digits)))
        } catch {
            throw AccountError.unreachable(RemoteFailure.from(error).description)
        }
        switch answer {
        case .noContent: return
        case .badRequest(let answer): throw AccountError.refused(try answer.body.json.message)
        case .contentTooLarge(let answer): throw AccountError.refused(try answer.body.json.message)
        case .tooManyRequests(let answer): throw AccountError.refused(try answer.body.json.message)
        case .unsupportedMediaType(let answer): throw AccountError.refused(try answer.body.json.message)
        case .undocumented(let status, let payload): throw AccountError.refused(await remoteFailure(status, payload).description)
        }
    }

    /// Asks the server to mail a new code to `email` (the previous one stops working); the server
    /// answers alike whether or not the address has an account waiting for one.
    public func requestVerificationCode(email: String) async throws {
        let answer: Operations.SendVerificationCode.Output
        do {
            answer = try await link.client.sendVerificationCode(body: .json(.init(email: email)))
        } catch {
            throw AccountError.unreachable(RemoteFailure.from(error).description)
        }
        switch answer {
        case .accepted: return
        case .badRequest(let answer): throw AccountError.invalid(try answer.body.json.message)
        case .contentTooLarge(let answer): throw AccountError.refused(try answer.body.json.message)
        case .unsupportedMediaType(let answer): throw AccountError.invalid(try answer.body.json.message)
        case .undocumented(let status, let payload): throw AccountError.refused(await remoteFailure(status, payload).description)
        }
    }

    /// Signs in through the server or, when it cannot be reached, with the password checked on
    /// this device. Refused while another person's changes wait on this device; a sign-in as
    /// someone else removes the previous person's data.
    public func signIn(email: String, password: String) async throws -> (session: Session, online: Bool) {
        var staleWaiting = 0
        if policy.wipesAfterOfflineAge, let saved = try vault.saved(), isPastOfflineAge(saved) {
            let waiting = try unsentEverywhere(saved.userID).total
            if waiting == 0 { try await wipe(saved) } else { staleWaiting = waiting }
        }
        let previous = try vault.saved()
        let someoneElse = previous.map { $0.email.lowercased() != email.lowercased() } ?? false
        if let previous, someoneElse {
            let unsent = try unsentEverywhere(previous.userID)
            if unsent.total > 0 {
                throw SessionError.otherUserHasPendingChanges(username: previous.username, count: unsent.total, refused: unsent.own.failed)
            }
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
            if staleWaiting > 0 { throw AccountError.offlineTooLong(days: offlineDays, waiting: staleWaiting, email: email) }
            if policy.onePersonPerDevice, let previous, someoneElse { throw AccountError.otherPersonOnDevice(username: previous.username) }
            do {
                session = try await vault.unlockOffline(email: email, password: password)
            } catch SessionError.noOfflineSession where failure.isSilence {
                // NB: a server that took the connection and said nothing is not "No connection".
                throw AccountError.unreachable("\(failure.description), and this device has no saved sign-in for that email: try again once it answers")
            }
            online = false
        }
        if let previous, previous.userID != session.userID {
            try? FileManager.default.removeItem(at: configuration.userDirectory(previous.userID))
        }
        if online, let admits = policy.admits, !(await admits(link)) {
            try await vault.signOut(revoke: revoke)
            throw AccountError.notAdmitted
        }
        if online { await flushRevocations() }
        return (session, online)
    }

    /// The person signed in on this device, if any (their session may be locked).
    public func whoami() throws -> DeviceAccount? {
        try vault.saved().map { DeviceAccount(id: $0.userID, username: $0.username, email: $0.email) }
    }

    /// The saved sign-in, resumed; nil when nobody is signed in (or the offline period is over).
    public func resume() throws -> Session? { try vault.resume() }

    /// With `AccountPolicy.wipesAfterOfflineAge`, at a start: past the offline age, wipes this
    /// device's data and throws `wipedAfterOfflineAge`, or, while the person's changes wait for
    /// the server, throws `offlineTooLong` (they must go online).
    public func enforceOfflineAge() async throws {
        guard policy.wipesAfterOfflineAge, let saved = try vault.saved(), isPastOfflineAge(saved) else { return }
        let waiting = try unsentEverywhere(saved.userID).total
        guard waiting == 0 else { throw AccountError.offlineTooLong(days: offlineDays, waiting: waiting, email: saved.email) }
        try await wipe(saved)
        throw AccountError.wipedAfterOfflineAge(days: offlineDays)
    }

    /// Signs out and removes the person's data from this device. Refused while changes wait to
    /// be sent or were refused by the server, unless `discarding` says which may be lost: the
    /// refused ones only, or everything. Offline, the revocation waits; `revokingWithin` bounds
    /// how long the server may take to hear of it now (default: the configuration's timeouts).
    public func signOut(discarding: SignOutDiscard = .nothing, revokingWithin patience: Duration? = nil) async throws -> DeviceSignOut {
        guard let session = try vault.saved() else { throw AccountError.notSignedIn }
        let (counts, failedCalls) = try unsent(session.userID)
        switch discarding {
        case .nothing where counts.pending > 0 || counts.failed > 0,
             .failed where counts.pending > 0:
            throw SessionError.unsentChanges(waiting: counts.pending, refused: counts.failed, refusedCalls: failedCalls)
        default:
            break
        }
        if discarding != .everything {
            let others = otherAppsUnsent(session.userID)
            if !others.isEmpty { throw SessionError.otherAppsUnsent(others) }
        }
        if let patience {
            let serverURL = configuration.serverURL
            try await vault.signOut { token in
                try await Self.revoke(token, serverURL: serverURL, timeout: patience + patience,
                                      timeouts: ServerLink.Timeouts(connect: patience, firstByte: patience))
            }
        } else {
            try await vault.signOut(revoke: revoke)
        }
        try? FileManager.default.removeItem(at: configuration.userDirectory(session.userID))
        return DeviceSignOut(username: session.username, discardedWaiting: counts.pending, discardedRefused: counts.failed,
                             revocationQueued: !(try vault.pendingRevocations()).isEmpty)
    }

    /// Sends sign-outs the server has not heard of yet.
    public func flushRevocations() async {
        guard let waiting = try? vault.pendingRevocations(), !waiting.isEmpty else { return }
        try? await vault.flushRevocations(revoke: revoke)
    }

    /// Revokes an access token on the server; an already refused token counts as revoked.
    @Sendable public func revoke(_ token: String) async throws {
        try await Self.revoke(token, serverURL: configuration.serverURL, timeout: configuration.requestTimeout,
                              timeouts: configuration.timeouts)
    }

    /// A person's changes on this device that the server has not accepted: waiting to be sent
    /// (`pending`) and refused (`failed`); only the person's own work counts (`DeviceApp.isPersonsWork`).
    public func unsentCounts(_ userID: String) throws -> OutboxCounts { try unsent(userID).counts }

    /// The counts of `unsentCounts`, and how many of the failed entries are calls (not changes of a record).
    private func unsent(_ userID: String) throws -> (counts: OutboxCounts, failedCalls: Int) {
        let path = configuration.databasePath(userID)
        guard FileManager.default.fileExists(atPath: path) else { return (OutboxCounts(), 0) }
        // NB: a refetch of the server's record is the device's own housekeeping, never the person's work.
        let entries = try Outbox(store: try LocalStore(path: path, migrations: app.migrations)).entries()
            .filter { $0.operation != RecordRefetch.operation && app.isPersonsWork($0) }
        let failed = entries.filter { $0.state == .failed }
        return (OutboxCounts(pending: entries.count - failed.count, failed: failed.count), failed.filter { $0.kind == .call }.count)
    }

    /// This app's unsent entries (`own`), and how many there are with every other app's in the
    /// person's folder (`total`): what removing the folder would lose. Each database read once.
    private func unsentEverywhere(_ userID: String) throws -> (own: OutboxCounts, total: Int) {
        let own = try unsentCounts(userID)
        return (own, own.total + otherAppsUnsent(userID).values.reduce(0, +))
    }

    /// The databases of other apps given the same data folder (they share the sign-in and the
    /// person's folder), with their entries not on the server, by database name.
    ///
    /// NB: read without their migrations, which this app does not know, and with every entry
    /// counted but a refetch (the device's housekeeping): what such an app would call its own
    /// housekeeping (SpendiQ's last-seen calls) counts too. Better a sign-out refused once than
    /// work lost. A database that cannot be read counts as one entry: its data may be anything.
    func otherAppsUnsent(_ userID: String) -> [String: Int] {
        let folder = configuration.userDirectory(userID)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        var unsent: [String: Int] = [:]
        for name in names where name.hasSuffix(".sqlite") && name != configuration.databaseName {
            let path = folder.appendingPathComponent(name).path
            let count = (try? DatabaseQueue(path: path).read { db in
                guard try db.tableExists("eventual_outbox") else { return 0 }
                return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM eventual_outbox WHERE operation != ?",
                                        arguments: [RecordRefetch.operation]) ?? 0
            }) ?? 1
            if count > 0 { unsent[String(name.dropLast(".sqlite".count)), default: 0] += count }
        }
        return unsent
    }

    private var offlineDays: Int { Int(configuration.maxOfflineAge.components.seconds / 86_400) }

    private func isPastOfflineAge(_ session: Session) -> Bool {
        configuration.clock() - session.lastOnlineSignInAt > configuration.maxOfflineAge.milliseconds
    }

    /// Removes a person's data and saved sign-in from this device (the server keeps everything).
    private func wipe(_ session: Session) async throws {
        try? FileManager.default.removeItem(at: configuration.userDirectory(session.userID))
        // NB: the token is past the offline age: the server refuses it already; nothing to revoke.
        try await vault.signOut(revoke: { _ in })
    }

    private static func revoke(_ token: String, serverURL: URL, timeout: Duration, timeouts: ServerLink.Timeouts) async throws {
        // NB: a link of its own, without the revocations' middleware, so that sending one never sends them again.
        let link = ServerLink(serverURL: serverURL, timeout: timeout, timeouts: timeouts) { token }
        switch try await link.client.logout() {
        case .noContent, .unauthorized: return
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "sign-out")
        }
    }
}

extension OutboxCounts {
    /// Every entry not on the server, waiting or refused.
    var total: Int { pending + failed }
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
    /// The server refused what was typed (a short password, a malformed email), with its reason.
    case invalid(String)
    /// The server refused, with its reason.
    case refused(String)
    /// Past the offline age while the person's changes wait: they must sign in online.
    case offlineTooLong(days: Int, waiting: Int, email: String)
    /// Past the offline age, this device's data was removed (the server keeps everything).
    case wipedAfterOfflineAge(days: Int)
    /// Offline, only the person whose data is on this device may sign in.
    case otherPersonOnDevice(username: String)
    /// The server does not let this person use the app yet (SpendiQ: the email is not verified).
    case notAdmitted
    /// The saved sign-in no longer resumes (the server refused its token): sign in again online.
    case signInAgain(email: String)
    /// No email was given to confirm, none waits for its code, and nobody is signed in.
    case noEmailToVerify
    /// The email has an account already (perhaps made in another app: one account serves them all).
    case emailAlreadyRegistered(String)

    /// Runs `body`, throwing an account error in the app's words (`speak`).
    public static func spoken<T>(as speak: (AccountError) -> any Error, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as AccountError {
            throw speak(error)
        }
    }

    public var description: String {
        switch self {
        case .notSignedIn: return "Not signed in: log in with your email first"
        case .unreachable(let reason): return reason
        case .invalid(let message), .refused(let message): return message
        case .offlineTooLong(let days, let waiting, _):
            return "More than \(days) days without an online sign-in, and \(waiting) change(s) wait: sign in online to send them"
        case .wipedAfterOfflineAge(let days):
            return "More than \(days) days without an online sign-in: this device's data was removed; sign in online"
        case .otherPersonOnDevice(let username): return "Only \(username) can sign in on this device while it is offline"
        case .notAdmitted: return "The server does not let this account in yet"
        case .signInAgain: return "The server no longer accepts this device's sign-in: sign in again online"
        case .emailAlreadyRegistered(let email):
            let apps = EventualApp.builtIn.map(\.title).joined(separator: ", ")
            return "\(email) already has an account, which serves every app on this server alike (\(apps) and the others): log in with it"
        case .noEmailToVerify: return "Which email? Give it with --email (no registration on this device waits for a code)"
        }
    }
}
