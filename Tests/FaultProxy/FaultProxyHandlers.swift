import NIOCore
import NIOPosix

extension FaultProxy {
    /// One of a matched pair, one per side of a proxied connection: what it reads from its channel it
    /// judges through the registry and then writes, maybe later, to its partner's channel.
    ///
    /// Both halves live on the same event loop, so they call each other directly.
    final class GlueHandler: ChannelDuplexHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        /// Above this many delayed bytes the handler stops reading from its channel.
        private static let maximumQueuedBytes = 1 << 20
        /// The bytes a slow link delivers at once.
        private static let pacedSliceBytes = 1024

        private enum Item {
            case data(ByteBuffer)
            case shutdownOutput
            case close
            case cut
        }

        private let registry: Registry
        private let id: ConnectionID
        /// The way the bytes this handler reads travel.
        private let direction: Direction
        private var partner: GlueHandler?
        private var context: ChannelHandlerContext?
        private var isReadPending = false
        private var queue = CircularBuffer<(deadline: NIODeadline, item: Item)>()
        private var queuedBytes = 0
        private var lastDeadline = NIODeadline.uptimeNanoseconds(0)
        private var drainTask: Scheduled<Void>?
        /// Completes once everything the partner wrote into this channel so far has been handed to the socket.
        private var lastWrite: EventLoopFuture<Void>?

        init(registry: Registry, id: ConnectionID, direction: Direction) {
            self.registry = registry
            self.id = id
            self.direction = direction
        }

        func handlerAdded(context: ChannelHandlerContext) {
            self.context = context
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            self.context = nil
            // NB: delayed data still queued keeps flowing to the partner; the cycle breaks once drained.
            if queue.isEmpty { partner = nil }
        }

        func channelActive(context: ChannelHandlerContext) {
            if direction == .up { connectUpstream(context: context) }
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            switch registry.verdict(for: id, flowing: direction, chunkBytes: buffer.readableBytes) {
            case .forward(let delay):
                if direction == .up { registry.noteRequests(in: buffer) }
                enqueue(.data(buffer), after: delay)
            case .forwardThenCut(let bytes):
                enqueue(.data(buffer.getSlice(at: buffer.readerIndex, length: bytes)!), after: .zero)
                enqueue(.cut, after: .zero)
            case .cut:
                cutNow()
            case .discard:
                break
            case .pace(let latency, let rate):
                if direction == .up { registry.noteRequests(in: buffer) }
                // NB: a kilobyte at a time, each due when the link has carried what went before it:
                // a reader sees bytes trickle in, as on a slow link, not a chunk late all at once.
                var rest = buffer
                while rest.readableBytes > 0, let slice = rest.readSlice(length: min(Self.pacedSliceBytes, rest.readableBytes)) {
                    let transmission = Duration.nanoseconds(Int64(slice.readableBytes) * 1_000_000_000 / Int64(rate))
                    enqueue(.data(slice), after: latency, transmission: transmission)
                }
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            // NB: in the basement the other side must not notice; leaving blackHole closes it.
            if !registry.isBlackHoled(id) { enqueue(.close, after: .zero) }
            context.fireChannelInactive()
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case ChannelEvent.inputClosed = event, !registry.isBlackHoled(id) {
                enqueue(.shutdownOutput, after: .zero)
            }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            if context.channel.isWritable { partner?.resumeReading() }
            context.fireChannelWritabilityChanged()
        }

        func read(context: ChannelHandlerContext) {
            if canRead {
                context.read()
            } else {
                isReadPending = true
            }
        }

        // MARK: Pairing

        private func connectUpstream(context: ChannelHandlerContext) {
            let upstream = GlueHandler(registry: registry, id: id, direction: .down)
            let boundUpstream = NIOLoopBound(upstream, eventLoop: context.eventLoop)
            let registry = registry
            let id = id
            ClientBootstrap(group: context.eventLoop)
                .channelOption(.allowRemoteHalfClosure, value: true)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(boundUpstream.value)
                    }
                }
                .connect(host: registry.upstreamHost, port: registry.upstreamPort)
                .assumeIsolated()
                .whenComplete { result in
                    switch result {
                    case .success(let channel):
                        if registry.attach(upstream: channel, to: id) {
                            self.pair(with: upstream)
                        } else {
                            channel.close(promise: nil)
                        }
                    case .failure:
                        // The upstream is down: to the client that is a closed connection, like the real thing.
                        context.close(promise: nil)
                    }
                }
        }

        private func pair(with other: GlueHandler) {
            partner = other
            other.partner = self
            resumeReading()
            other.resumeReading()
        }

        // MARK: Flow

        private var canRead: Bool {
            guard let partner, let partnerContext = partner.context else { return false }
            return partnerContext.channel.isWritable && queuedBytes < Self.maximumQueuedBytes
        }

        private func resumeReading() {
            guard isReadPending, canRead, let context else { return }
            isReadPending = false
            context.read()
        }

        /// Queues `item` to go `delay` from now, after what is queued before it, and then after its
        /// `transmission` time (a slow link's time to carry it).
        private func enqueue(_ item: Item, after delay: Duration, transmission: Duration = .zero) {
            let deadline = max(.now() + TimeAmount(delay), lastDeadline) + TimeAmount(transmission)
            lastDeadline = deadline
            queue.append((deadline, item))
            if case .data(let buffer) = item { queuedBytes += buffer.readableBytes }
            if drainTask == nil { drain() }
        }

        private func drain() {
            drainTask = nil
            let now = NIODeadline.now()
            while let head = queue.first, head.deadline <= now {
                queue.removeFirst()
                perform(head.item)
            }
            if let head = queue.first, let eventLoop = (context ?? partner?.context)?.eventLoop {
                drainTask = eventLoop.assumeIsolated().scheduleTask(deadline: head.deadline) { self.drain() }
            } else {
                dropQueue()
            }
            resumeReading()
            if queue.isEmpty && context == nil { partner = nil }
        }

        private func perform(_ item: Item) {
            switch item {
            case .data(let buffer):
                queuedBytes -= buffer.readableBytes
                partner?.write(buffer)
            case .shutdownOutput:
                partner?.closeAfterPendingWrites(mode: .output)
            case .close:
                partner?.closeAfterPendingWrites(mode: .all)
            case .cut:
                dropQueue()
                partner?.closeAfterPendingWrites(mode: .all)
                context?.close(promise: nil)
            }
        }

        /// A reset: both sides close now and whatever is still delayed is lost.
        private func cutNow() {
            dropQueue()
            partner?.context?.close(promise: nil)
            context?.close(promise: nil)
        }

        private func dropQueue() {
            drainTask?.cancel()
            drainTask = nil
            queue.removeAll()
            queuedBytes = 0
        }

        // MARK: Called by the partner

        private func write(_ buffer: ByteBuffer) {
            guard let context else { return }
            let promise = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(wrapOutboundOut(buffer), promise: promise)
            lastWrite = promise.futureResult
        }

        private func closeAfterPendingWrites(mode: CloseMode) {
            guard let context else { return }
            guard let lastWrite else { return context.close(mode: mode, promise: nil) }
            lastWrite.assumeIsolated().whenComplete { _ in context.close(mode: mode, promise: nil) }
        }
    }

    /// The basement: reads and drops everything, never answers, never closes.
    final class SwallowHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {}
    }

    /// "Server unreachable": closes the connection as soon as it is up.
    final class RefuseHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer

        func channelActive(context: ChannelHandlerContext) {
            context.close(promise: nil)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
    }
}
