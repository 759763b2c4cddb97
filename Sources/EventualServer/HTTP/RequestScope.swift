import HTTPTypes
import Logging
import NIOCore

/// What a handler generated from the contract cannot see in its typed input: the request's
/// credentials, the client's address and the logger. Set by `EdgeResponder` for one request.
struct RequestScope: Sendable {
    let authorization: String?
    let remoteAddress: SocketAddress?
    let forwardedFor: String?
    let logger: Logger
    /// `If-None-Match` as sent. NB: the generated layer percent-decodes header values and reads a
    /// string header up to its first comma, so a list of entity tags arrives cut short there.
    var ifNoneMatch: String? = nil

    @TaskLocal static var current: RequestScope?

    /// The client's address, as throttling counts it (worked out only by the calls that need it).
    var clientAddress: String { ClientAddress.resolve(remote: remoteAddress, forwardedFor: forwardedFor) }

    /// The token of an `Authorization: Bearer …` header, if there is one.
    var bearerToken: String? { Self.bearerToken(in: authorization) }

    /// The token of an `Authorization` header's value `Bearer …`, if it is one.
    static func bearerToken(in authorization: String?) -> String? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
