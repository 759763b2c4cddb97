import HTTPTypes
import NIOCore

/// The address a request comes from, as throttling counts it.
enum ClientAddress {
    /// The peer's IP address, or, behind a reverse proxy that the operator trusts, the last address
    /// in `X-Forwarded-For` (the one that proxy appended; earlier ones are the client's to invent).
    static func resolve(remote: SocketAddress?, headers: HTTPFields, trustForwardedFor: Bool) -> String {
        if trustForwardedFor, let forwarded = headers[.init("X-Forwarded-For")!],
           let last = forwarded.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty {
            return String(last.prefix(64))
        }
        return remote?.ipAddress ?? "unknown"
    }
}
