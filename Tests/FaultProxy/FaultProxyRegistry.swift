import NIOCore
import Synchronization

extension FaultProxy {
    /// What the proxy has done so far, for assertions and diagnostics.
    public struct Counters: Sendable, Equatable {
        /// Connections the listener accepted (refused ones included).
        public var connectionsAccepted = 0
        /// Bytes forwarded client -> upstream.
        public var bytesUp = 0
        /// Bytes forwarded upstream -> client.
        public var bytesDown = 0
        /// Connections the proxy closed as a fault: refused, cut, reset, or dropped when leaving blackHole.
        public var connectionsCut = 0

        public init(connectionsAccepted: Int = 0, bytesUp: Int = 0, bytesDown: Int = 0, connectionsCut: Int = 0) {
            self.connectionsAccepted = connectionsAccepted
            self.bytesUp = bytesUp
            self.bytesDown = bytesDown
            self.connectionsCut = connectionsCut
        }
    }

    /// How a freshly accepted connection is handled.
    enum Admission: Sendable {
        case refuse
        case blackHole(ConnectionID)
        case forward(ConnectionID)
    }

    typealias ConnectionID = Int

    /// The mode, the seeded generator, the counters and every open connection, behind one lock so the
    /// mode can change from any thread while event loops forward traffic.
    final class Registry: Sendable {
        let upstreamHost: String
        let upstreamPort: Int
        private let state: Mutex<State>

        init(upstreamHost: String, upstreamPort: Int, seed: UInt64) {
            self.upstreamHost = upstreamHost
            self.upstreamPort = upstreamPort
            self.state = Mutex(State(generator: SeededGenerator(seed: seed)))
        }

        var mode: Mode {
            state.withLock { $0.mode }
        }

        var counters: Counters {
            state.withLock { $0.counters }
        }

        var requestLog: [String] {
            state.withLock { $0.requestLog }
        }

        /// Notes the request lines ("GET /v1/sync/pull?… HTTP/1.1") in bytes forwarded upstream.
        /// NB: a test's log, not a parser: it finds a request line at the start of a chunk or after
        /// a CRLF, which is where a client's writes put them.
        func noteRequests(in buffer: ByteBuffer) {
            let text = String(decoding: buffer.readableBytesView, as: UTF8.self)
            var lines: [String] = []
            for line in text.split(separator: "\r\n", omittingEmptySubsequences: true) {
                guard line.hasSuffix(" HTTP/1.1"),
                      ["GET ", "POST ", "PUT ", "PATCH ", "DELETE ", "HEAD "].contains(where: { line.hasPrefix($0) })
                else { continue }
                lines.append(String(line.dropLast(" HTTP/1.1".count)))
            }
            guard !lines.isEmpty else { return }
            state.withLock { $0.requestLog += lines }
        }

        var openConnectionCount: Int {
            state.withLock { $0.connections.count }
        }

        func admit(_ client: any Channel) -> Admission {
            state.withLock { state in
                guard !state.isStopped else { return .refuse }
                state.counters.connectionsAccepted += 1
                let id = state.nextID
                state.nextID += 1
                switch state.mode {
                case .refuse:
                    state.counters.connectionsCut += 1
                    return .refuse
                case .blackHole:
                    state.connections[id] = Connection(client: client, isBlackHoled: true, generation: state.generation)
                    return .blackHole(id)
                case .pass, .cutAfter, .cutRequestAfter, .flaky, .slowLink:
                    state.connections[id] = Connection(client: client, isBlackHoled: false, generation: state.generation)
                    return .forward(id)
                }
            }
        }

        /// Records the upstream half; false when the connection is already gone and `upstream` must be closed.
        func attach(upstream: any Channel, to id: ConnectionID) -> Bool {
            state.withLock { state in
                guard state.connections[id] != nil else { return false }
                state.connections[id]?.upstream = upstream
                return true
            }
        }

        /// Forgets a connection whose client side closed; returns its upstream half, still to be closed.
        func remove(_ id: ConnectionID) -> (any Channel)? {
            state.withLock { $0.connections.removeValue(forKey: id)?.upstream }
        }

        func isBlackHoled(_ id: ConnectionID) -> Bool {
            state.withLock { $0.connections[id]?.isBlackHoled ?? false }
        }

        func verdict(for id: ConnectionID, flowing direction: Direction, chunkBytes: Int) -> Verdict {
            state.withLock { state in
                guard var connection = state.connections[id] else { return .discard }
                defer { state.connections[id] = connection }
                if connection.isCut || connection.isBlackHoled { return .discard }
                if connection.generation != state.generation {
                    connection.generation = state.generation
                    connection.sentSinceModeChange = [.up: 0, .down: 0]
                }
                let verdict = state.mode.verdict(
                    forChunkOf: chunkBytes,
                    flowing: direction,
                    alreadySent: connection.sentSinceModeChange[direction, default: 0],
                    using: &state.generator
                )
                let forwarded: Int
                switch verdict {
                case .forward, .pace:
                    forwarded = chunkBytes
                case .forwardThenCut(let bytes):
                    forwarded = bytes
                    connection.isCut = true
                    state.counters.connectionsCut += 1
                case .cut:
                    forwarded = 0
                    connection.isCut = true
                    state.counters.connectionsCut += 1
                case .discard:
                    forwarded = 0
                }
                connection.sentSinceModeChange[direction, default: 0] += forwarded
                switch direction {
                case .up: state.counters.bytesUp += forwarded
                case .down: state.counters.bytesDown += forwarded
                }
                return verdict
            }
        }

        /// Switches the mode and returns the channels the switch condemns, for the caller to close.
        func setMode(_ mode: Mode) -> [any Channel] {
            state.withLock { state in
                let previous = state.mode
                state.mode = mode
                state.generation += 1
                var condemned: [any Channel] = []
                for id in state.connections.keys {
                    guard var connection = state.connections[id] else { continue }
                    defer { state.connections[id] = connection }
                    let leavesBasement = previous == .blackHole && mode != .blackHole && connection.isBlackHoled
                    if mode == .blackHole {
                        connection.isBlackHoled = true
                    } else if mode == .refuse || leavesBasement {
                        if !connection.isCut { state.counters.connectionsCut += 1 }
                        connection.isCut = true
                        condemned.append(contentsOf: connection.channels)
                    }
                }
                return condemned
            }
        }

        /// Refuses every future connection and returns every open channel, for the caller to close.
        func stop() -> [any Channel] {
            state.withLock { state in
                state.isStopped = true
                let channels = state.connections.values.flatMap(\.channels)
                state.connections.removeAll()
                return channels
            }
        }
    }

    private struct State: Sendable {
        var mode: Mode = .pass
        /// Bumped on every mode change so per-connection byte counts restart with the new mode.
        var generation = 0
        var generator: SeededGenerator
        var counters = Counters()
        /// Every request line forwarded upstream, oldest first, without its " HTTP/1.1".
        var requestLog: [String] = []
        var connections: [ConnectionID: Connection] = [:]
        var nextID: ConnectionID = 0
        var isStopped = false
    }

    private struct Connection: Sendable {
        let client: any Channel
        var upstream: (any Channel)?
        var isBlackHoled: Bool
        var isCut = false
        var generation: Int
        var sentSinceModeChange: [Direction: Int] = [:]

        init(client: any Channel, isBlackHoled: Bool, generation: Int) {
            self.client = client
            self.isBlackHoled = isBlackHoled
            self.generation = generation
        }

        var channels: [any Channel] {
            [client] + (upstream.map { [$0] } ?? [])
        }
    }
}
