import EventualAPI
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// A connection's first request, answered by the router, or upgraded to a live channel when it
/// asks for one (`LiveRoute.admit`).
///
/// NB: a live channel costs the server what its socket and handlers hold, and no task. Hummingbird
/// serves a WebSocket in the connection's task, and Swift keeps a task's deepest stack for the
/// task's life: with its ping task and a reader of ours, a channel held 34 KB at 10,000 devices,
/// 22 KB of it stacks. Here the connection's task returns once the channel is upgraded, and the
/// channel lives on in `LiveSocket`, on its event loop.
struct LiveHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    enum Negotiated: Sendable {
        /// Plain HTTP: the router answers.
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// An upgrade asked for and refused: a 400, and the connection closes.
        case refused(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// A live channel, now in the hands of its `LiveSocket`.
        case live
    }

    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<Negotiated>
        let channel: any Channel
    }

    let responder: HTTPChannelHandler.Responder
    let idleTimeout: TimeAmount
    let live: LiveRoute

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let live = self.live, idleTimeout = self.idleTimeout
        return channel.eventLoop.makeCompletedFuture {
            let admitted = NIOLoopBoundBox<LiveConnection?>(nil, eventLoop: channel.eventLoop)
            let asked = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            let upgrader = NIOTypedWebSocketServerUpgrader<Negotiated>(
                maxFrameSize: LiveSocket.largestFrame,
                shouldUpgrade: { channel, head in
                    asked.value = true
                    let promise = channel.eventLoop.makePromise(of: LiveConnection?.self)
                    promise.completeWithTask { await live.admit(target: head.uri, authorization: head.headers.first(name: "Authorization")) }
                    return promise.futureResult.map { connection in
                        admitted.value = connection
                        return connection == nil ? nil : HTTPHeaders()
                    }
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        guard let connection = admitted.value else { throw NIOWebSocketUpgradeError.unsupportedWebSocketTarget }
                        admitted.value = nil
                        try channel.pipeline.syncOperations.addHandler(
                            LiveSocket(connection: connection, hub: live.hub, heartbeat: .nanoseconds(live.heartbeat.nanoseconds)))
                        return .live
                    }
                }
            )
            let upgrades = NIOTypedHTTPServerUpgradeConfiguration<Negotiated>(upgraders: [upgrader]) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                    try channel.pipeline.syncOperations.addHandler(
                        HTTPConnectionStateHandler(idleTimeout: .nanoseconds(idleTimeout.nanoseconds), logger: logger))
                    let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                        wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                    return asked.value ? .refused(http) : .http(http)
                }
            }
            var pipeline = NIOUpgradableHTTPServerPipelineConfiguration(upgradeConfiguration: upgrades)
            pipeline.enablePipelining = false  // NIOAsyncChannel answers one request at a time
            pipeline.enableErrorHandling = false  // the router answers errors, `UnreadableRequests` what the parser refuses
            pipeline.enableResponseHeaderValidation = false  // HTTPTypes validated them
            let limits = HTTP1Channel.Configuration().httpDecoder
            pipeline.decoderConfiguration.maxHeaderFieldSize = limits.maxHeaderFieldSize
            pipeline.decoderConfiguration.maxHeaderListSize = limits.maxHeaderListSize
            pipeline.decoderConfiguration.maxHeaderFieldCount = limits.maxHeaderFieldCount
            let negotiated = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: pipeline)
            try UnreadableRequests.install(in: channel.pipeline.syncOperations, longestLine: limits.maxHeaderFieldSize)
            return Value(negotiated: negotiated, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http(let http):
                await handleHTTP(asyncChannel: http, logger: logger)
            case .refused(let http):
                await refuse(http, logger: logger)
            case .live:
                return
            }
        } catch {
            logger.debug("connection ended before its first request", metadata: ["error": "\(type(of: error))"])
        }
    }

    /// A 400 that closes the connection: an upgrade this server will not make.
    private func refuse(_ http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, logger: Logger) async {
        do {
            try await http.executeThenClose { _, outbound in
                let head = HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])
                try await outbound.write(contentsOf: [.head(head), .end(nil)])
            }
        } catch {
            logger.debug("refused upgrade not answered", metadata: ["error": "\(type(of: error))"])
        }
    }
}

/// A live channel on its socket: the WebSocket's side of the server (`LiveWire`), run on the
/// channel's event loop.
///
/// - On `handlerAdded` it joins the hub and sends the `live` frame, then what the hub owes the
///   connection whenever it is woken (`LiveConnection.attach`); while the socket is not writable
///   (a device that does not read) it sends nothing and what is owed coalesces in the connection.
/// - It pings every `heartbeat`; a ping still unanswered at the next closes the socket.
/// - It answers the device's pings, and its close with the same close.
/// - A connection closed by the hub (signed out) is closed with `LiveWire.signedOutCode`, and a
///   server shutting down closes with "going away"; the socket closes when the device answers,
///   or after `closeTimeout`.
final class LiveSocket: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// A device sends only pings, pongs and its close: 125 bytes at most each.
    static let largestFrame = 1024

    private let connection: LiveConnection
    private let hub: LiveHub
    private let heartbeat: TimeAmount
    private let closeTimeout: TimeAmount
    private var pings: RepeatedTask?
    private var unanswered = false
    private var closeDeadline: Scheduled<Void>?
    private var closing = false

    init(connection: LiveConnection, hub: LiveHub, heartbeat: TimeAmount, closeTimeout: TimeAmount = .seconds(5)) {
        self.connection = connection
        self.hub = hub
        self.heartbeat = heartbeat
        self.closeTimeout = closeTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        hub.register(connection)
        let hello = LiveWire.Message(type: .live, heartbeat: Int(heartbeat.nanoseconds / 1_000_000_000))
        context.writeAndFlush(wrapOutboundOut(Self.textFrame(hello, allocator: context.channel.allocator)), promise: nil)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        pings = context.eventLoop.scheduleRepeatedTask(initialDelay: heartbeat, delay: heartbeat) { _ in
            let (socket, context) = bound.value
            socket.ping(context)
        }
        let loop = context.eventLoop
        connection.attach {
            loop.execute {
                let (socket, context) = bound.value
                socket.sendOwed(context)
            }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { sendOwed(context) }
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .ping:
            guard !closing else { return }
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .pong:
            unanswered = false
        case .connectionClose:
            if closing { return context.close(promise: nil) }
            // The device closes: the same close back, then the socket.
            closing = true
            var echo = frame.unmaskedData
            let code = echo.readWebSocketErrorCode() ?? .normalClosure
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(Self.closeFrame(code, reason: "", allocator: channel.allocator)))
                .whenComplete { _ in channel.close(promise: nil) }
        default:
            // A device has nothing to say on this channel: text and binary frames are dropped.
            break
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            close(context, code: .goingAway, reason: "server shutting down")
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A frame the decoder refused, or a socket that failed: nothing more can be said on it.
        context.close(promise: nil)
    }

    /// Sends what the connection is owed, or its close.
    private func sendOwed(_ context: ChannelHandlerContext) {
        guard context.channel.isActive, !closing else { return }
        if connection.isClosed {
            return close(context, code: WebSocketErrorCode(codeNumber: Int(LiveWire.signedOutCode)), reason: "signed out")
        }
        guard context.channel.isWritable else { return }
        let messages = connection.take()
        guard !messages.isEmpty else { return }
        for message in messages {
            context.write(wrapOutboundOut(Self.textFrame(message, allocator: context.channel.allocator)), promise: nil)
        }
        context.flush()
    }

    private func ping(_ context: ChannelHandlerContext) {
        guard !closing else { return }
        if unanswered {
            // NB: a device that did not answer the last ping may not read a close either.
            return context.close(promise: nil)
        }
        unanswered = true
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: context.channel.allocator.buffer(capacity: 0))),
                              promise: nil)
    }

    private func close(_ context: ChannelHandlerContext, code: WebSocketErrorCode, reason: String) {
        guard !closing, context.channel.isActive else { return }
        closing = true
        pings?.cancel()
        pings = nil
        context.writeAndFlush(wrapOutboundOut(Self.closeFrame(code, reason: reason, allocator: context.channel.allocator)), promise: nil)
        let channel = context.channel
        closeDeadline = context.eventLoop.scheduleTask(in: closeTimeout) { channel.close(promise: nil) }
    }

    private func stop() {
        pings?.cancel()
        pings = nil
        closeDeadline?.cancel()
        closeDeadline = nil
        connection.detach()
        hub.unregister(connection)
    }

    private static func textFrame(_ message: LiveWire.Message, allocator: ByteBufferAllocator) -> WebSocketFrame {
        let json = (try? JSONEncoder().encode(message)) ?? Data()
        return WebSocketFrame(fin: true, opcode: .text, data: allocator.buffer(bytes: json))
    }

    private static func closeFrame(_ code: WebSocketErrorCode, reason: String, allocator: ByteBufferAllocator) -> WebSocketFrame {
        var data = allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        return WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with the live channel's WebSocket upgrade, every connection idle-guarded.
    static func liveHTTP1(idleTimeout: TimeAmount, live: LiveRoute) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            IdleGuardedChannel(inner: LiveHTTP1Channel(responder: responder, idleTimeout: idleTimeout, live: live), timeout: idleTimeout)
        }
    }
}
