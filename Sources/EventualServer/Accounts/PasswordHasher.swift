import HummingbirdBcrypt
import NIOPosix

/// bcrypt, run on NIO's blocking thread pool so that a login never stalls request handling.
struct PasswordHasher: Sendable {
    let cost: UInt8
    /// A hash of a random password, checked when the email is unknown so that a wrong email
    /// takes as long as a wrong password.
    let decoyHash: String

    static func make(cost: UInt8) async throws -> PasswordHasher {
        let decoy = try await NIOThreadPool.singleton.runIfActive {
            Bcrypt.hash(String(UInt64.random(in: .min ... .max)), cost: cost)
        }
        return PasswordHasher(cost: cost, decoyHash: decoy)
    }

    func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    func verify(_ password: String, against hash: String?) async throws -> Bool {
        let decoy = decoyHash
        let matches = try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash ?? decoy) }
        return matches && hash != nil
    }
}
