import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Answers "can a TCP connection to the server be opened at all?" within a short deadline.
///
/// NB: the HTTP client under `ServerLink` retries a refused connection until the request's
/// deadline, so with the server down every request would take the full timeout. The app asks
/// this probe first and treats a refusal as "offline" at once.
struct ServerProbe: Sendable {
    let host: String
    let port: Int
    let timeout: Duration

    init(serverURL: URL, timeout: Duration) {
        host = serverURL.host ?? "127.0.0.1"
        port = serverURL.port ?? (serverURL.scheme == "https" ? 443 : 80)
        self.timeout = timeout
    }

    /// True when a connection opened before the deadline.
    func canConnect() async -> Bool {
        let (host, port, millis) = (self.host, self.port, Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))
        // NB: name resolution and poll block: on a thread of their own, off the cooperative pool.
        return await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: Self.connect(host: host, port: port, millis: millis)) }.start()
        }
    }

    private static func connect(host: String, port: Int, millis: Int32) -> Bool {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var results: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &results) == 0, let first = results else { return false }
        defer { freeaddrinfo(results) }
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            defer { candidate = info.pointee.ai_next }
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            #if canImport(Glibc)
            let started = Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen)
            #else
            let started = Darwin.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen)
            #endif
            if started == 0 { return true }
            guard errno == EINPROGRESS else { continue }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&poller, 1, millis) == 1 else { continue }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if error == 0 { return true }
        }
        return false
    }
}
