import NIOCore
import NIOPosix
import Synchronization

/// An upstream for proxy tests: echoes every byte (or just swallows it) and remembers how many
/// each connection sent.
final class FaultProxyEchoServer: Sendable {
    let port: Int
    private let listener: any Channel
    private let log: Log

    private init(listener: any Channel, port: Int, log: Log) {
        self.listener = listener
        self.port = port
        self.log = log
    }

    static func start(echoes: Bool = true) async throws -> FaultProxyEchoServer {
        let log = Log()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(EchoHandler(log: log, index: log.open(), echoes: echoes))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return FaultProxyEchoServer(listener: listener, port: listener.localAddress!.port!, log: log)
    }

    /// Bytes received on each connection, in the order connections were accepted.
    var bytesReceivedPerConnection: [Int] {
        log.state.withLock { $0.bytesReceived }
    }

    /// Connections that have closed so far.
    var connectionsClosed: Int {
        log.state.withLock { $0.closed }
    }

    func stop() async {
        try? await listener.close()
    }

    private final class Log: Sendable {
        struct State {
            var bytesReceived: [Int] = []
            var closed = 0
        }

        let state = Mutex(State())

        func open() -> Int {
            state.withLock { state in
                state.bytesReceived.append(0)
                return state.bytesReceived.count - 1
            }
        }
    }

    private final class EchoHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        private let log: Log
        private let index: Int
        private let echoes: Bool

        init(log: Log, index: Int, echoes: Bool) {
            self.log = log
            self.index = index
            self.echoes = echoes
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            log.state.withLock { $0.bytesReceived[index] += buffer.readableBytes }
            if echoes { context.write(wrapOutboundOut(buffer), promise: nil) }
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            context.flush()
        }

        func channelInactive(context: ChannelHandlerContext) {
            log.state.withLock { $0.closed += 1 }
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}

/// A client socket for proxy tests: sends bytes, collects what comes back, notices when closed.
final class FaultProxyTestClient: Sendable {
    private let channel: any Channel
    private let inbox: Inbox

    private init(channel: any Channel, inbox: Inbox) {
        self.channel = channel
        self.inbox = inbox
    }

    static func connect(port: Int) async throws -> FaultProxyTestClient {
        let inbox = Inbox()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(CollectingHandler(inbox: inbox))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        return FaultProxyTestClient(channel: channel, inbox: inbox)
    }

    /// Everything received so far.
    var received: [UInt8] {
        inbox.state.withLock { $0.bytes }
    }

    var isClosed: Bool {
        inbox.state.withLock { $0.isClosed }
    }

    func send(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    /// Waits until `count` bytes arrived or the connection closed or `timeout` passed; returns what arrived.
    func receive(_ count: Int, timeout: Duration = .seconds(10)) async -> [UInt8] {
        await FaultProxyPoll.until(timeout: timeout) { self.received.count >= count || self.isClosed }
        return received
    }

    /// Whether the connection closed within `timeout`.
    func waitUntilClosed(timeout: Duration = .seconds(10)) async -> Bool {
        await FaultProxyPoll.until(timeout: timeout) { self.isClosed }
    }

    func close() async {
        try? await channel.close()
    }

    private final class Inbox: Sendable {
        struct State {
            var bytes: [UInt8] = []
            var isClosed = false
        }

        let state = Mutex(State())
    }

    private final class CollectingHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer

        private let inbox: Inbox

        init(inbox: Inbox) {
            self.inbox = inbox
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            inbox.state.withLock { $0.bytes.append(contentsOf: buffer.readableBytesView) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            inbox.state.withLock { $0.isClosed = true }
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}

enum FaultProxyPoll {
    /// Polls `condition` every 10 ms until it holds or `timeout` passes; returns whether it held.
    @discardableResult
    static func until(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }
}
