import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

/// Closes a connection that neither sends nor receives anything for `timeout`, from the moment
/// it is accepted.
///
/// NB: with the WebSocket upgrade, Hummingbird adds its idle handler only once a first request
/// has arrived: a client that connects and sends nothing would hold a connection (and a place
/// under the connection cap) for ever. This handler comes first in every connection's pipeline;
/// a connection upgraded to the live channel drops it (`LiveRoute`), its pings keeping watch instead.
final class IdleGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    static let name = "eventual-idle-guard"

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        arm(context)
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        arm(context)
        context.write(data, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    private func arm(_ context: ChannelHandlerContext) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }
}

/// A server child channel with an `IdleGuard` in front of `inner`'s pipeline.
struct IdleGuardedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value
    let inner: Inner
    let timeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let timeout = self.timeout
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(IdleGuard(timeout: timeout), name: IdleGuard.name)
        }.flatMap { inner.setup(channel: channel, logger: logger) }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with the live channel's WebSocket upgrade, every connection idle-guarded.
    static func liveHTTP1(idleTimeout: TimeAmount, ws: WebSocketServerConfiguration,
                          shouldUpgrade: @escaping @Sendable (HTTPRequest, any Channel, Logger) async throws
                              -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>>) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            IdleGuardedChannel(inner: HTTP1WebSocketUpgradeChannel(responder: responder,
                                                                   configuration: .init(http1: .init(idleTimeout: idleTimeout), ws: ws),
                                                                   shouldUpgrade: shouldUpgrade),
                               timeout: idleTimeout)
        }
    }
}
