import EventualAPI
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sends mail through an SMTP relay: `smtp://[user:password@]host[:port]`. Plain SMTP with
/// EHLO, optional AUTH PLAIN, MAIL FROM, RCPT TO, DATA (dot-stuffed) and QUIT. NB: no STARTTLS:
/// use a relay on the same host or network (a local Postfix, a sidecar) that carries it onward.
struct SMTPMailer: MailSender {
    let host: String
    let port: UInt16
    let user: String?
    let password: String?
    /// Seconds any one step (connect, a reply) may take.
    let timeout: Int

    init(url: URL, timeout: Int = 10) throws {
        guard url.scheme?.lowercased() == "smtp", let host = url.host, !host.isEmpty else {
            throw MailError("the SMTP URL must look like smtp://[user:password@]host[:port]")
        }
        guard (1...65_535).contains(url.port ?? 25) else { throw MailError("the SMTP port must be from 1 to 65535") }
        self.host = host
        self.port = UInt16(url.port ?? 25)
        self.user = url.user?.removingPercentEncoding
        self.password = url.password?.removingPercentEncoding
        self.timeout = timeout
    }

    func send(_ mail: Mail) async throws {
        // NB: blocking sockets, on a thread of their own: never on the cooperative pool.
        try await offCooperativePool { try self.sendBlocking(mail) }
    }

    private func sendBlocking(_ mail: Mail) throws {
        let from = try Self.address(mail.from), to = try Self.address(mail.to)
        let connection = try SMTPConnection(host: host, port: port, timeout: timeout)
        defer { connection.close() }
        try connection.expect([220])
        try connection.command("EHLO eventual.local", expect: [250])
        if let user {
            let token = Data(("\0" + user + "\0" + (password ?? "")).utf8).base64EncodedString()
            try connection.command("AUTH PLAIN \(token)", expect: [235], redacted: "AUTH PLAIN")
        }
        try connection.command("MAIL FROM:<\(from)>", expect: [250])
        try connection.command("RCPT TO:<\(to)>", expect: [250, 251])
        try connection.command("DATA", expect: [354])
        // NB: a line that starts with a dot gets another (RFC 5321 4.5.2), so the body cannot end the mail early.
        let stuffed = mail.rfc5322.split(separator: "\r\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(".") ? "." + $0 : String($0) }.joined(separator: "\r\n")
        try connection.write(stuffed + (stuffed.hasSuffix("\r\n") ? "" : "\r\n") + ".\r\n")
        try connection.expect([250])
        try? connection.command("QUIT", expect: [221])
    }

    /// The bare address of `Name <a@b>` or `a@b`, refusing anything that could inject a command.
    static func address(_ text: String) throws -> String {
        var address = text
        if let open = text.lastIndex(of: "<"), let close = text.lastIndex(of: ">"), open < close {
            address = String(text[text.index(after: open)..<close])
        }
        guard address.contains("@"), !address.unicodeScalars.contains(where: { $0.value < 0x21 || $0 == "<" || $0 == ">" || $0.value == 0x7F }) else {
            throw MailError("'\(address.prefix(80))' is not a mail address")
        }
        return address
    }
}

/// One SMTP session over a blocking TCP socket with timeouts.
private final class SMTPConnection {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private let where_: String

    init(host: String, port: UInt16, timeout: Int) throws {
        where_ = "\(host):\(port)"
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw MailError("cannot resolve the SMTP host \(host)")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var node: UnsafeMutablePointer<addrinfo>? = first
        var opened: Int32 = -1
        while let info = node {
            let candidate = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            if candidate >= 0 {
                var limit = timeval(tv_sec: timeout, tv_usec: 0)
                // NB: on Linux SO_SNDTIMEO also bounds connect().
                setsockopt(candidate, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
                setsockopt(candidate, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
                if connect(candidate, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 {
                    opened = candidate
                    break
                }
                lastError = String(cString: strerror(errno))
                Glibc.close(candidate)
            }
            node = info.pointee.ai_next
        }
        guard opened >= 0 else { throw MailError("cannot connect to the SMTP relay \(where_): \(lastError)") }
        fd = opened
    }

    func close() { _ = Glibc.close(fd) }

    func write(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBufferPointer { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw MailError("the SMTP relay \(where_) stopped reading (\(String(cString: strerror(errno))))") }
            sent += count
        }
    }

    func command(_ line: String, expect codes: Set<Int>, redacted: String? = nil) throws {
        try write(line + "\r\n")
        try expect(codes, after: redacted ?? String(line.prefix(4)))
    }

    /// Reads one (possibly multi-line) reply and checks its code.
    func expect(_ codes: Set<Int>, after step: String = "greeting") throws {
        var code = 0
        var text = ""
        while true {
            let line = try readLine()
            guard line.count >= 3, let value = Int(line.prefix(3)) else {
                throw MailError("the SMTP relay \(where_) answered something that is not SMTP")
            }
            code = value
            text = String(line.dropFirst(4))
            if line.count < 4 || line[line.index(line.startIndex, offsetBy: 3)] != "-" { break }
        }
        guard codes.contains(code) else {
            throw MailError("the SMTP relay \(where_) refused \(step): \(code) \(text.prefix(200))")
        }
    }

    private func readLine() throws -> String {
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                var line = Array(buffer[..<end])
                buffer.removeFirst(end + 1)
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            guard buffer.count < 64 * 1024 else { throw MailError("the SMTP relay \(where_) sent an endless line") }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBufferPointer { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else {
                throw MailError(count == 0 ? "the SMTP relay \(where_) closed the connection"
                                           : "the SMTP relay \(where_) did not answer in time")
            }
            buffer += chunk[..<count]
        }
    }
}
