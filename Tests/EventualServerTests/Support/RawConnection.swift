import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP connection to a loopback port, for what an HTTP client library will not do: send
/// half a request, a chunked body, or hang up mid-body. Every read waits at most `timeout`.
final class RawConnection: @unchecked Sendable {
    // NB: @unchecked because the descriptor is used by one test at a time, never concurrently.
    private let descriptor: Int32

    init(port: Int, timeout: Duration = .seconds(5)) throws {
        descriptor = try Self.connected(port: port, timeout: timeout)
    }

    /// A socket connected to `port`, or an error with nothing left open.
    /// NB: the descriptor is stored only once connected. Closing it here and again in `deinit`
    /// (which runs when an initialiser throws after every property is set) closed a number that
    /// another thread may already have reused: a test's pipe was closed under it and its number
    /// given to a non-blocking socket, and the test process crashed reading it (EAGAIN).
    private static func connected(port: Int, timeout: Duration) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw RawConnectionError("socket() failed") }
        var time = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            throw RawConnectionError("connect() to port \(port) failed")
        }
        return descriptor
    }

    deinit { close(descriptor) }

    func send(_ text: String) throws { try send(Data(text.utf8)) }

    func send(_ data: Data) throws {
        var offset = 0
        try data.withUnsafeBytes { buffer in
            while offset < buffer.count {
                let sent = Glibc.send(descriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { throw RawConnectionError("send() failed (the server closed the connection?)") }
                offset += sent
            }
        }
    }

    /// Reads until the peer closes or the read times out; returns what arrived.
    func readAll() -> String {
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
            if let text = String(data: received, encoding: .utf8), Self.isComplete(text) { break }
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Everything the peer sends until it closes the connection (or a read times out).
    func readToEnd() -> String {
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Whether the peer has closed the connection (a read returns end of file within the timeout).
    func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, 0) == 0
    }

    /// Closes the connection now, as a client that hangs up.
    func hangUp() { shutdown(descriptor, Int32(SHUT_RDWR)) }

    /// A response with a Content-Length whose body has fully arrived.
    private static func isComplete(_ text: String) -> Bool {
        guard let headerEnd = text.range(of: "\r\n\r\n") else { return false }
        let head = text[..<headerEnd.lowerBound].lowercased()
        guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
              let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return false }
        return text.utf8.count - text[..<headerEnd.upperBound].utf8.count >= length
    }
}

struct RawConnectionError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
