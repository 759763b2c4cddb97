import _CryptoExtras
import Crypto
import EventualAPI
import Foundation
import OpenAPIRuntime
import Synchronization

/// The signed-in user as this device remembers them.
public struct Session: Codable, Sendable, Equatable {
    public let userID: String
    public let username: String
    public let email: String
    /// Nil once the server refused it (401) or after an offline unlock that found none.
    public var accessToken: String?
    /// Unix milliseconds of the last sign-in that reached the server.
    public let lastOnlineSignInAt: Int64
    let verifier: PasswordVerifier
}

/// A salted PBKDF2-SHA256 hash of the password, to unlock offline without the server.
struct PasswordVerifier: Codable, Sendable, Equatable {
    let salt: Data
    let hash: Data
    let rounds: Int

    static func make(password: String, rounds: Int) async throws -> PasswordVerifier {
        var generator = SystemRandomNumberGenerator()
        let salt = Data((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        let hash = try await offCooperativePool { try derive(password, salt: salt, rounds: rounds) }
        return PasswordVerifier(salt: salt, hash: hash, rounds: rounds)
    }

    func matches(_ password: String) async throws -> Bool {
        let (salt, rounds) = (self.salt, self.rounds)
        let candidate = try await offCooperativePool { try Self.derive(password, salt: salt, rounds: rounds) }
        // NB: constant-time comparison, as for any secret.
        guard candidate.count == hash.count else { return false }
        return zip(candidate, hash).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private static func derive(_ password: String, salt: Data, rounds: Int) throws -> Data {
        let key = try KDF.Insecure.PBKDF2.deriveKey(from: Data(password.utf8), salt: salt, using: .sha256,
                                                    outputByteCount: 32, unsafeUncheckedRounds: rounds)
        return key.withUnsafeBytes { Data($0) }
    }
}

/// Why a sign-in, unlock or sign-out did not happen.
public enum SessionError: Error, Equatable, CustomStringConvertible {
    case wrongCredentials
    case noOfflineSession
    case offlineSignInExpired(days: Int)
    /// `refused`: of the `count`, those the server refused (sending again cannot help: they are settled or discarded).
    case otherUserHasPendingChanges(username: String, count: Int, refused: Int = 0)
    case pendingChanges(count: Int)
    /// Changes that wait to be sent, and changes the server refused (retry or discard those);
    /// `refusedCalls`: of the refused, those that are not a change of a record.
    case unsentChanges(waiting: Int, refused: Int, refusedCalls: Int = 0)
    /// Other apps given the same data folder share the sign-in and the person's folder, and a
    /// sign-out removes their databases too: these have entries not on the server, by the name
    /// of their database ("pantry" for pantry.sqlite).
    case otherAppsUnsent([String: Int])
    case corruptSecret(String)
    case server(String)

    public var description: String {
        switch self {
        case .wrongCredentials: return "Wrong email or password"
        case .noOfflineSession: return "No connection, and this device has no saved sign-in for that email: connect to sign in"
        case .offlineSignInExpired(let days):
            return "Offline sign-in is allowed for \(days) days after the last online sign-in: connect to sign in again"
        case .otherUserHasPendingChanges(let username, let count, let refused):
            if refused == count {
                return "\(username) has \(count) change(s) the server refused on this device: sign in as \(username) and settle or discard them, "
                    + "or sign \(username) out with logout --discard-refused"
            }
            return "\(username) has \(count) change(s) not yet sent from this device: sign in as \(username) and sync first"
                + (refused > 0 ? " (and settle or discard the \(refused) refused)" : "")
        case .pendingChanges(let count):
            return "\(count) change(s) have not reached the server yet: sync first, or sign out anyway and lose them"
        case .unsentChanges(let waiting, let refused, _):
            var parts: [String] = []
            if waiting > 0 { parts.append("\(waiting) change(s) wait to be sent: sync first") }
            if refused > 0 { parts.append("\(refused) change(s) were refused by the server: retry or discard them") }
            return parts.joined(separator: "; ") + "; or sign out anyway and lose them"
        case .otherAppsUnsent(let apps):
            let listed = apps.sorted { $0.key < $1.key }.map { "\($0.value) of \($0.key)" }.joined(separator: ", ")
            return "Other apps share this data folder and its sign-in, and signing out removes their data too: "
                + "\(listed) not yet on the server; sync them first, or sign out anyway and lose them"
        case .corruptSecret(let reason): return "The saved sign-in is damaged (\(reason)): sign in again online"
        case .server(let message): return message
        }
    }
}

/// Keeps the signed-in user's access token and profile, and lets them unlock offline with their
/// password for a limited time after the last online sign-in.
public final class SessionVault: Sendable {
    static let sessionSecret = "session"
    static let revocationsSecret = "pending-revocations"

    public let maxOfflineAge: Duration
    private let secrets: any SecretStore
    private let rounds: Int
    private let wallClock: @Sendable () -> Int64
    private let unlocked = Mutex<Session?>(nil)
    /// Held while the queued revocations are read and written back.
    private let revocationsFile = Mutex(())

    /// - Parameter rounds: PBKDF2 iterations (at least 100,000).
    public init(secrets: any SecretStore, maxOfflineAge: Duration = .seconds(7 * 24 * 3600), rounds: Int = 210_000,
                wallClock: @escaping @Sendable () -> Int64 = { UnixMillis.now() }) {
        precondition(rounds >= 100_000, "PBKDF2 needs at least 100,000 rounds")
        self.secrets = secrets
        self.maxOfflineAge = maxOfflineAge
        self.rounds = rounds
        self.wallClock = wallClock
    }

    /// The unlocked session, if any.
    public var session: Session? { unlocked.withLock { $0 } }
    /// The access token to send, if the session has one.
    public var accessToken: String? { unlocked.withLock { $0?.accessToken } }

    /// The session saved on this device (locked or not).
    public func saved() throws -> Session? {
        guard let data = try secrets.read(Self.sessionSecret) else { return nil }
        do {
            return try JSONDecoder().decode(Session.self, from: data)
        } catch {
            throw SessionError.corruptSecret("unreadable session file")
        }
    }

    /// Resumes the saved session without a password (a process that starts while signed in).
    @discardableResult
    public func resume() throws -> Session? {
        guard let saved = try saved() else { return nil }
        guard saved.accessToken != nil || withinOfflineAge(saved) else { return nil }
        unlocked.withLock { $0 = saved }
        return saved
    }

    /// Signs in through the server and remembers the session and a password verifier.
    @discardableResult
    public func signIn(email: String, password: String, client: Client) async throws -> Session {
        let token: String
        switch try await client.login(body: .json(.init(email: email, password: password))) {
        case .created(let answer): token = try answer.body.json.accessToken
        case .unauthorized: throw SessionError.wrongCredentials
        case .badRequest(let answer): throw SessionError.server(try answer.body.json.message)
        case .contentTooLarge(let answer): throw SessionError.server(try answer.body.json.message)
        case .tooManyRequests(let answer): throw SessionError.server(try answer.body.json.message)
        case .unsupportedMediaType(let answer): throw SessionError.server(try answer.body.json.message)
        case .undocumented(let status, let payload): throw await sessionError(status, payload)
        }
        let profile: Components.Schemas.User
        let me = try await BearerMiddleware.$tokenOverride.withValue(token) { try await client.getMe() }
        switch me {
        case .ok(let answer): profile = try answer.body.json
        case .unauthorized(let answer): throw SessionError.server(try answer.body.json.message)
        case .undocumented(let status, let payload): throw await sessionError(status, payload)
        }
        let session = Session(userID: profile.id, username: profile.username, email: profile.email, accessToken: token,
                              lastOnlineSignInAt: wallClock(), verifier: try await PasswordVerifier.make(password: password, rounds: rounds))
        try save(session)
        unlocked.withLock { $0 = session }
        return session
    }

    /// Unlocks the saved session with the password, with no network.
    @discardableResult
    public func unlockOffline(email: String, password: String) async throws -> Session {
        guard let saved = try saved(), saved.email.lowercased() == email.lowercased() else { throw SessionError.noOfflineSession }
        guard withinOfflineAge(saved) else {
            throw SessionError.offlineSignInExpired(days: Int(maxOfflineAge.components.seconds / 86_400))
        }
        guard try await saved.verifier.matches(password) else { throw SessionError.wrongCredentials }
        unlocked.withLock { $0 = saved }
        return saved
    }

    /// The server refused the token (401): forget it, keep the user and their data.
    public func tokenRejected() throws {
        let session = unlocked.withLock { session -> Session? in
            session?.accessToken = nil
            return session
        }
        if let session { try save(session) }
    }

    /// Signs out unless changes are still waiting to reach the server: then it refuses, or with
    /// `force` goes ahead and returns how many are discarded (the caller drops them).
    public func signOut(
        pendingChanges: Int, force: Bool, revoke: @Sendable (String) async throws -> Void
    ) async throws -> Int {
        guard pendingChanges == 0 || force else { throw SessionError.pendingChanges(count: pendingChanges) }
        try await signOut(revoke: revoke)
        return pendingChanges
    }

    /// Forgets the session on this device at once. The token's revocation is sent now if
    /// `revoke` succeeds, else kept and sent by `flushRevocations` later.
    public func signOut(revoke: @Sendable (String) async throws -> Void) async throws {
        let session = try unlocked.withLock { $0 } ?? saved()
        unlocked.withLock { $0 = nil }
        try secrets.delete(Self.sessionSecret)
        guard let token = session?.accessToken else { return }
        do {
            try await revoke(token)
        } catch {
            try queueRevocation(token)
        }
    }

    /// Sends revocations queued by offline sign-outs; keeps those that still fail.
    public func flushRevocations(revoke: @Sendable (String) async throws -> Void) async throws {
        var revoked: Set<String> = []
        for token in try pendingRevocations() {
            do {
                try await revoke(token)
                revoked.insert(token)
            } catch {
                continue
            }
        }
        guard !revoked.isEmpty else { return }
        // NB: read again under the lock: a sign-out may have queued another token meanwhile.
        try revocationsFile.withLock { _ in
            try secrets.write(Self.revocationsSecret, try JSONEncoder().encode(try pendingRevocations().filter { !revoked.contains($0) }))
        }
    }

    public func pendingRevocations() throws -> [String] {
        guard let data = try secrets.read(Self.revocationsSecret) else { return [] }
        return (try? JSONDecoder().decode([String].self, from: data)) ?? []
    }

    private func queueRevocation(_ token: String) throws {
        try revocationsFile.withLock { _ in
            try secrets.write(Self.revocationsSecret, try JSONEncoder().encode(try pendingRevocations() + [token]))
        }
    }

    private func withinOfflineAge(_ session: Session) -> Bool {
        wallClock() - session.lastOnlineSignInAt <= maxOfflineAge.milliseconds
    }

    private func save(_ session: Session) throws {
        try secrets.write(Self.sessionSecret, try JSONEncoder().encode(session))
    }
}

func sessionError(_ status: Int, _ payload: UndocumentedPayload) async -> SessionError {
    let failure = await remoteFailure(status, payload)
    return .server(failure.description)
}
