import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A local SMTP server that accepts every mail and keeps it: the relay a test cannot use for
/// real, spoken to over real SMTP on a loopback port.
public final class SMTPSink: Sendable {
    /// A mail as the sink received it.
    public struct Received: Sendable, Equatable {
        public let from: String
        public let to: [String]
        /// Headers and body, dot-unstuffed, with CRLF line ends.
        public let data: String
    }

    public let port: Int
    public var url: URL { URL(string: "smtp://127.0.0.1:\(port)")! }
    private let listener: any Channel
    private let box: Mailbox

    final class Mailbox: Sendable {
        let mails = Mutex<[Received]>([])
    }

    private init(listener: any Channel, port: Int, box: Mailbox) {
        self.listener = listener
        self.port = port
        self.box = box
    }

    public static func start() async throws -> SMTPSink {
        let box = Mailbox()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Session(box: box)) }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = listener.localAddress?.port else { throw TestFailure("the SMTP sink has no port") }
        return SMTPSink(listener: listener, port: port, box: box)
    }

    public func stop() async { try? await listener.close() }

    /// Every mail received so far.
    public var mails: [Received] { box.mails.withLock { $0 } }

    /// Waits (at most `timeout`) for a mail to `address`, the newest one.
    public func mail(to address: String, timeout: Duration = .seconds(10)) async throws -> Received {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let mail = mails.last(where: { $0.to.contains(address) }) { return mail }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("no mail to \(address) reached the SMTP sink in \(timeout)")
    }

    /// One SMTP conversation: greeting, EHLO, MAIL, RCPT, DATA, QUIT.
    final class Session: ChannelInboundHandler, @unchecked Sendable {
        // NB: @unchecked: a handler lives on its channel's event loop and is only touched there.
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private let box: Mailbox
        private var pending: [UInt8] = []
        private var from = ""
        private var to: [String] = []
        private var data: [String]? = nil

        init(box: Mailbox) { self.box = box }

        func channelActive(context: ChannelHandlerContext) {
            reply("220 sink.test ESMTP", context)
        }

        func channelRead(context: ChannelHandlerContext, data incoming: NIOAny) {
            var buffer = unwrapInboundIn(incoming)
            pending += buffer.readBytes(length: buffer.readableBytes) ?? []
            while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                var line = Array(pending[..<end])
                pending.removeFirst(end + 1)
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                handle(String(decoding: line, as: UTF8.self), context)
            }
        }

        private func handle(_ line: String, _ context: ChannelHandlerContext) {
            if var lines = data {
                if line == "." {
                    let mail = Received(from: from, to: to, data: lines.joined(separator: "\r\n") + "\r\n")
                    box.mails.withLock { $0.append(mail) }
                    data = nil
                    reply("250 queued", context)
                } else {
                    lines.append(line.hasPrefix(".") ? String(line.dropFirst()) : line)
                    data = lines
                }
                return
            }
            let verb = line.prefix(4).uppercased()
            switch verb {
            case "EHLO", "HELO": reply("250-sink.test\r\n250 8BITMIME", context)
            case "MAIL":
                from = Self.address(line)
                to = []
                reply("250 OK", context)
            case "RCPT":
                to.append(Self.address(line))
                reply("250 OK", context)
            case "DATA":
                data = []
                reply("354 end with a dot", context)
            case "QUIT":
                reply("221 bye", context)
                context.close(promise: nil)
            case "RSET", "NOOP": reply("250 OK", context)
            default: reply("502 not here", context)
            }
        }

        private static func address(_ line: String) -> String {
            guard let open = line.firstIndex(of: "<"), let close = line.lastIndex(of: ">"), open < close else { return "" }
            return String(line[line.index(after: open)..<close])
        }

        private func reply(_ text: String, _ context: ChannelHandlerContext) {
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: text + "\r\n")), promise: nil)
        }
    }
}
