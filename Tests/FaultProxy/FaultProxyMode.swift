extension FaultProxy {
    /// The fault the proxy applies; settable at any time while traffic flows.
    public enum Mode: Sendable, Equatable {
        /// Forward both ways unchanged.
        case pass
        /// Accept, then close at once: "server unreachable". Also closes open connections.
        case refuse
        /// Accept and swallow everything, never answer, never close: the basement.
        /// Open connections go silent too; leaving this mode closes every black-holed connection.
        case blackHole
        /// Close both sides once `bytes` bytes went upstream -> client: the response is cut mid-way.
        case cutAfter(bytes: Int)
        /// Close both sides once `bytes` bytes went client -> upstream: the request is cut mid-way.
        case cutRequestAfter(bytes: Int)
        /// Delay each chunk by a seeded random latency, or reset the connection with this probability.
        case flaky(latency: ClosedRange<Duration>, resetProbability: Double)
        /// A slow link: every byte arrives `latency` late, and each way of a connection carries at
        /// most `bytesPerSecond`, a kilobyte at a time (a crowded building's Wi-Fi, an edge signal).
        case slowLink(bytesPerSecond: Int, latency: Duration)
    }

    /// Which way a chunk travels through the proxy.
    public enum Direction: Sendable, Equatable {
        /// Client -> upstream (requests).
        case up
        /// Upstream -> client (responses).
        case down
    }

    /// What the proxy does with one chunk read from one side of a connection.
    public enum Verdict: Sendable, Equatable {
        /// Pass the whole chunk on after this delay.
        case forward(after: Duration)
        /// Pass the first `bytes` bytes on, then close both sides.
        case forwardThenCut(bytes: Int)
        /// Close both sides now; the chunk is lost.
        case cut
        /// Drop the chunk and keep the connection open.
        case discard
        /// Pass the chunk on `latency` late, no faster than `bytesPerSecond` after what went before it.
        case pace(latency: Duration, bytesPerSecond: Int)
    }
}

extension FaultProxy.Mode {
    /// Decides the fate of one chunk of `chunkBytes` bytes flowing `direction`, given how many bytes
    /// already went that way on this connection since the mode was set.
    ///
    /// Pure apart from `generator`, so a seed replays the same decisions for the same chunks.
    public func verdict(
        forChunkOf chunkBytes: Int,
        flowing direction: FaultProxy.Direction,
        alreadySent: Int,
        using generator: inout some RandomNumberGenerator
    ) -> FaultProxy.Verdict {
        switch self {
        case .pass:
            return .forward(after: .zero)
        case .refuse:
            return .cut
        case .blackHole:
            return .discard
        case .cutAfter(let limit):
            return direction == .down
                ? Self.verdict(forChunkOf: chunkBytes, alreadySent: alreadySent, limit: limit)
                : .forward(after: .zero)
        case .cutRequestAfter(let limit):
            return direction == .up
                ? Self.verdict(forChunkOf: chunkBytes, alreadySent: alreadySent, limit: limit)
                : .forward(after: .zero)
        case .flaky(let latency, let resetProbability):
            // NB: always draw both numbers so the sequence of draws does not depend on the outcome.
            let roll = Double.random(in: 0..<1, using: &generator)
            let delay = Self.randomDuration(in: latency, using: &generator)
            return roll < resetProbability ? .cut : .forward(after: delay)
        case .slowLink(let rate, let latency):
            return .pace(latency: latency, bytesPerSecond: max(1, rate))
        }
    }

    private static func verdict(forChunkOf chunkBytes: Int, alreadySent: Int, limit: Int) -> FaultProxy.Verdict {
        let remaining = limit - alreadySent
        if remaining <= 0 { return .cut }
        if chunkBytes < remaining { return .forward(after: .zero) }
        return .forwardThenCut(bytes: remaining)
    }

    private static func randomDuration(
        in range: ClosedRange<Duration>,
        using generator: inout some RandomNumberGenerator
    ) -> Duration {
        let lower = range.lowerBound.nanoseconds
        let upper = range.upperBound.nanoseconds
        guard lower < upper else { return range.lowerBound }
        return .nanoseconds(Int64.random(in: lower...upper, using: &generator))
    }
}

extension Duration {
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

extension FaultProxy {
    /// SplitMix64: tiny, fast and fully determined by its seed, so a failing run replays by seed.
    public struct SeededGenerator: RandomNumberGenerator, Sendable {
        private var state: UInt64

        public init(seed: UInt64) {
            state = seed
        }

        public mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
