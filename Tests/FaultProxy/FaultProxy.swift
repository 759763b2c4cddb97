import NIOCore
import NIOPosix

/// A TCP proxy on loopback that injects network faults between a client and a real server:
/// the basement (no network), the elevator (cut mid-request or mid-response), a crowded building
/// (slow, with random resets). All randomness comes from `seed`, so a failing run replays by seed.
public final class FaultProxy: Sendable {
    /// The loopback port clients connect to.
    public let port: Int
    private let listener: any Channel
    private let registry: Registry

    private init(listener: any Channel, port: Int, registry: Registry) {
        self.listener = listener
        self.port = port
        self.registry = registry
    }

    /// Listens on 127.0.0.1 at a system-chosen port and forwards to the upstream, in `.pass` mode.
    public static func start(upstreamHost: String = "127.0.0.1", upstreamPort: Int, seed: UInt64) async throws -> FaultProxy {
        let registry = Registry(upstreamHost: upstreamHost, upstreamPort: upstreamPort, seed: seed)
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try Self.admit(channel, registry: registry)
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = listener.localAddress?.port else {
            try? await listener.close()
            throw FaultProxyError.noLocalPort
        }
        return FaultProxy(listener: listener, port: port, registry: registry)
    }

    /// The fault applied from now on, to new connections and, where it makes sense, to open ones.
    ///
    /// Setting a mode restarts the byte counts of `cutAfter` / `cutRequestAfter` on open connections.
    public var mode: Mode {
        get { registry.mode }
        set {
            for channel in registry.setMode(newValue) {
                channel.close(promise: nil)
            }
        }
    }

    /// What the proxy has done so far.
    public var counters: Counters {
        registry.counters
    }

    /// The requests forwarded upstream so far ("GET /v1/sync/pull?since=…"), oldest first.
    public var requestLog: [String] {
        registry.requestLog
    }

    /// Client connections currently open through the proxy.
    public var openConnectionCount: Int {
        registry.openConnectionCount
    }

    /// The count of connections accepted once the proxy is quiet: none open, and none accepted for
    /// `quiet` (at most `timeout`). A process that has exited may have left a connection in the
    /// listener's backlog that a busy machine accepts a moment later; counting before that would
    /// charge it to whatever runs next.
    public func settledConnectionsAccepted(quiet: Duration = .milliseconds(300), timeout: Duration = .seconds(5)) async -> Int {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var last = counters.connectionsAccepted
        var quietSince = clock.now
        while clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(25))
            let now = counters.connectionsAccepted
            if now != last || openConnectionCount > 0 {
                last = now
                quietSince = clock.now
            } else if clock.now - quietSince >= quiet {
                break
            }
        }
        return last
    }

    /// Closes the listener and every open connection; calling it again does nothing.
    public func stop() async {
        listener.close(promise: nil)
        let channels = registry.stop()
        for channel in channels {
            channel.close(promise: nil)
        }
        try? await listener.closeFuture.get()
        for channel in channels {
            try? await channel.closeFuture.get()
        }
    }

    private static func admit(_ channel: any Channel, registry: Registry) throws {
        let pipeline = channel.pipeline.syncOperations
        switch registry.admit(channel) {
        case .refuse:
            try pipeline.addHandler(RefuseHandler())
        case .blackHole(let id):
            try pipeline.addHandler(SwallowHandler())
            forget(id, when: channel, closesIn: registry)
        case .forward(let id):
            try pipeline.addHandler(GlueHandler(registry: registry, id: id, direction: .up))
            forget(id, when: channel, closesIn: registry)
        }
    }

    private static func forget(_ id: ConnectionID, when client: any Channel, closesIn registry: Registry) {
        client.closeFuture.whenComplete { _ in
            registry.remove(id)?.close(promise: nil)
        }
    }
}

/// Why a `FaultProxy` could not start.
public enum FaultProxyError: Error, CustomStringConvertible {
    case noLocalPort

    public var description: String {
        switch self {
        case .noLocalPort: "the proxy's listener has no local port"
        }
    }
}
