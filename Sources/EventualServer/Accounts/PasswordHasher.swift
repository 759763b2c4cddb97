import Crypto
import EventualStorage
import Foundation
import HummingbirdBcrypt
import NIOPosix
import ServiceLifecycle
import Synchronization

/// bcrypt on a thread pool of its own, so that a flood of logins queues behind itself and never
/// in front of the SQLite writer or any other endpoint.
///
/// NB: it used to run on `NIOThreadPool.singleton`, which SQLiteNIO's queries share (2 threads
/// here): 200 concurrent logins held `GET /users/me` up for ~70 s.
final class PasswordHasher: Service, Sendable {
    let cost: UInt8
    /// A hash of a random password, checked when the email is unknown so that a wrong email
    /// takes as long as a wrong password.
    let decoyHash: String
    /// Hashes waiting or running beyond this many are refused (`Refusal.overloaded`) instead of queueing for minutes.
    let maxQueued: Int
    private let pool: NIOThreadPool
    private let queued = Atomic<Int>(0)

    /// Starts a pool of `threads` threads and computes the decoy hash on it.
    static func make(cost: UInt8, threads: Int, maxQueued: Int = 2048) async throws -> PasswordHasher {
        let pool = NIOThreadPool(numberOfThreads: max(1, threads))
        pool.start()
        do {
            let decoy = try await pool.runIfActive { Bcrypt.hash(String(UInt64.random(in: .min ... .max)), cost: cost) }
            return PasswordHasher(cost: cost, decoyHash: decoy, maxQueued: maxQueued, pool: pool)
        } catch {
            try? await pool.shutdownGracefully()
            throw error
        }
    }

    private init(cost: UInt8, decoyHash: String, maxQueued: Int, pool: NIOThreadPool) {
        self.cost = cost
        self.decoyHash = decoyHash
        self.maxQueued = maxQueued
        self.pool = pool
    }

    func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await onPool { Bcrypt.hash(Self.bcryptInput(password), cost: cost) }
    }

    func verify(_ password: String, against hash: String?) async throws -> Bool {
        let decoy = decoyHash
        let matches = try await onPool { Bcrypt.verify(Self.bcryptInput(password), hash: hash ?? decoy) }
        return matches && hash != nil
    }

    /// bcrypt reads only this many bytes of its input.
    static let bcryptMaximumBytes = 72

    /// What bcrypt is given for `password`: the password itself when bcrypt reads all of it, else
    /// the base64 of its SHA-256 (44 bytes), so that no character of a long password is ignored.
    ///
    /// NB: passwords of at most 72 bytes, all that registration accepted before, hash exactly as
    /// they always did, so existing accounts keep signing in.
    static func bcryptInput(_ password: String) -> String {
        guard password.utf8.count > bcryptMaximumBytes else { return password }
        return Data(SHA256.hash(data: Data(password.utf8))).base64EncodedString()
    }

    private func onPool<R: Sendable>(_ work: @escaping @Sendable () -> R) async throws -> R {
        let waiting = queued.wrappingAdd(1, ordering: .relaxed).newValue
        defer { queued.wrappingSubtract(1, ordering: .relaxed) }
        guard waiting <= maxQueued else {
            throw Refusal.overloaded("Too many sign-ins at once; retry in a moment", retryAfter: 2)
        }
        return try await pool.runIfActive {
            // NB: a hash yields the core to requests when both want it (see ThreadPriority); alone,
            // as in a login flood on an idle server, it still has the whole core.
            ThreadPriority.lower(to: Self.niceness)
            return work()
        }
    }

    /// The hashing threads' nice value.
    static let niceness: Int32 = 5

    /// Stops the pool when the server shuts down.
    func run() async throws {
        try? await gracefulShutdown()
        try await pool.shutdownGracefully()
    }

    /// Stops the pool (for a hasher that never ran as a service).
    func shutdown() async {
        try? await pool.shutdownGracefully()
    }
}
