import NIOCore

/// The address a request comes from, as throttling counts it.
enum ClientAddress {
    /// The peer's IP address, or, behind a reverse proxy that the operator trusts (`forwardedFor`
    /// is passed only then), the last address in `X-Forwarded-For`: the one that proxy appended;
    /// earlier ones are the client's to invent.
    static func resolve(remote: SocketAddress?, forwardedFor: String?) -> String {
        if let forwardedFor, let last = forwardedFor.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty {
            return String(last.prefix(64))
        }
        return remote?.ipAddress ?? "unknown"
    }
}
