import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// Closes a connection that sends nothing for `timeout` before its first request's head is
/// complete, then stands down.
///
/// NB: with the WebSocket upgrade, Hummingbird adds its idle handler only once a first request's
/// head has arrived: a client that connected and sent nothing, or half a head, held its
/// connection (and a place under the connection cap) for ever. This handler leads every
/// connection's pipeline until the end of that head (`CRLF CRLF`); from there Hummingbird's own
/// handler watches an HTTP connection between requests (never one waiting for its answer: a login
/// queued behind bcrypt for a minute must not be cut), and a live channel's pings watch it.
final class IdleGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    static let name = "eventual-idle-guard"

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    /// How many bytes of `CRLF CRLF` the last read ended with.
    private var matched = 0
    private static let headEnd: [UInt8] = [13, 10, 13, 10]

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        var headComplete = false
        for byte in buffer.readableBytesView {
            matched = byte == Self.headEnd[matched] ? matched + 1 : (byte == 13 ? 1 : 0)
            if matched == Self.headEnd.count {
                headComplete = true
                break
            }
        }
        context.fireChannelRead(data)
        if headComplete {
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        } else {
            arm(context)
        }
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
