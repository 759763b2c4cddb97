import Testing

@Suite(.timeLimit(.minutes(2))) struct FaultProxyTests {
    // MARK: Live traffic

    @Test func passModeRoundTripsAMegabyteBothWays() async throws {
        try await withProxy { proxy, upstream in
            // Given
            let client = try await FaultProxyTestClient.connect(port: proxy.port)
            let payload = Self.bytes(1 << 20)

            // When
            try await client.send(payload)
            let echoed = await client.receive(payload.count, timeout: .seconds(30))

            // Then
            #expect(echoed == payload)
            #expect(upstream.bytesReceivedPerConnection == [payload.count])
            #expect(proxy.counters == .init(connectionsAccepted: 1, bytesUp: payload.count, bytesDown: payload.count))
            await client.close()
        }
    }

    @Test func refuseClosesTheConnectionAtOnce() async throws {
        try await withProxy { proxy, upstream in
            // Given
            proxy.mode = .refuse

            // When
            let client = try await FaultProxyTestClient.connect(port: proxy.port)

            // Then
            #expect(await client.waitUntilClosed())
            #expect(client.received.isEmpty)
            #expect(upstream.bytesReceivedPerConnection.isEmpty)
            #expect(proxy.counters.connectionsCut == 1)
        }
    }

    @Test func blackHoleNeitherAnswersNorCloses() async throws {
        try await withProxy { proxy, upstream in
            // Given
            proxy.mode = .blackHole
            let client = try await FaultProxyTestClient.connect(port: proxy.port)

            // When
            try await client.send(Self.bytes(1000))
            let answered = await FaultProxyPoll.until(timeout: .milliseconds(300)) {
                !client.received.isEmpty || client.isClosed
            }

            // Then
            #expect(!answered)
            #expect(!client.isClosed)
            #expect(upstream.bytesReceivedPerConnection.isEmpty)
            // NB: the client's connect completes in the kernel's accept queue; the proxy counts the
            // connection once its event loop has taken it, which on a busy machine comes later.
            #expect(await FaultProxyPoll.until(timeout: .seconds(10)) { proxy.openConnectionCount == 1 })
            await client.close()
        }
    }

    @Test func cutAfterDeliversExactlyThatManyBytesThenCloses() async throws {
        try await withProxy { proxy, upstream in
            // Given
            proxy.mode = .cutAfter(bytes: 100)
            let client = try await FaultProxyTestClient.connect(port: proxy.port)
            let request = Self.bytes(1000)

            // When
            try await client.send(request)

            // Then
            #expect(await client.waitUntilClosed())
            #expect(client.received == Array(request.prefix(100)))
            #expect(upstream.bytesReceivedPerConnection == [1000])
            #expect(proxy.counters.bytesDown == 100)
            #expect(proxy.counters.connectionsCut == 1)
        }
    }

    @Test func cutRequestAfterLetsExactlyThatManyBytesReachTheUpstream() async throws {
        try await withProxy(upstreamEchoes: false) { proxy, upstream in
            // Given
            proxy.mode = .cutRequestAfter(bytes: 100)
            let client = try await FaultProxyTestClient.connect(port: proxy.port)

            // When
            try await client.send(Self.bytes(1000))

            // Then
            #expect(await client.waitUntilClosed())
            #expect(await FaultProxyPoll.until { upstream.connectionsClosed == 1 })
            #expect(upstream.bytesReceivedPerConnection == [100])
            #expect(proxy.counters.bytesUp == 100)
            #expect(proxy.counters.connectionsCut == 1)
        }
    }

    @Test func flakyWithoutResetsDeliversEveryByteInOrder() async throws {
        try await withProxy { proxy, _ in
            // Given
            proxy.mode = .flaky(latency: .zero ... .milliseconds(3), resetProbability: 0)
            let client = try await FaultProxyTestClient.connect(port: proxy.port)
            let payload = Self.bytes(256 * 1024)

            // When
            for chunk in stride(from: 0, to: payload.count, by: 16 * 1024) {
                try await client.send(Array(payload[chunk ..< chunk + 16 * 1024]))
            }
            let echoed = await client.receive(payload.count, timeout: .seconds(30))

            // Then
            #expect(echoed == payload)
            #expect(proxy.counters.connectionsCut == 0)
            await client.close()
        }
    }

    @Test func flakyWithCertainResetClosesOnTheFirstChunk() async throws {
        try await withProxy { proxy, upstream in
            // Given
            proxy.mode = .flaky(latency: .zero ... .zero, resetProbability: 1)
            let client = try await FaultProxyTestClient.connect(port: proxy.port)

            // When
            try await client.send(Self.bytes(100))

            // Then
            #expect(await client.waitUntilClosed())
            #expect(client.received.isEmpty)
            #expect(proxy.counters.bytesUp == 0)
            #expect(proxy.counters.connectionsCut == 1)
            #expect(await FaultProxyPoll.until { upstream.connectionsClosed == 1 })
            #expect(upstream.bytesReceivedPerConnection == [0])
        }
    }

    @Test func upstreamDownLooksLikeAClosedConnection() async throws {
        // Given
        let gone = try await FaultProxyEchoServer.start()
        await gone.stop()
        let proxy = try await FaultProxy.start(upstreamPort: gone.port, seed: 1)

        // When
        let client = try await FaultProxyTestClient.connect(port: proxy.port)

        // Then
        #expect(await client.waitUntilClosed())
        #expect(await FaultProxyPoll.until { proxy.openConnectionCount == 0 })
        await proxy.stop()
    }

    // MARK: Changing mode under traffic

    @Test func leavingBlackHoleClosesTheConnectionsItSilenced() async throws {
        try await withProxy { proxy, _ in
            // Given an open connection that worked
            let client = try await FaultProxyTestClient.connect(port: proxy.port)
            try await client.send(Self.bytes(10))
            #expect(await client.receive(10) == Self.bytes(10))

            // When the basement starts, it goes silent but stays open
            proxy.mode = .blackHole
            try await client.send(Self.bytes(10))
            let answered = await FaultProxyPoll.until(timeout: .milliseconds(300)) {
                client.received.count > 10 || client.isClosed
            }
            #expect(!answered)

            // Then leaving the basement closes it, and a new connection works
            proxy.mode = .pass
            #expect(await client.waitUntilClosed())
            #expect(proxy.counters.connectionsCut == 1)
            let fresh = try await FaultProxyTestClient.connect(port: proxy.port)
            try await fresh.send(Self.bytes(10))
            #expect(await fresh.receive(10) == Self.bytes(10))
            await fresh.close()
        }
    }

    @Test func cutAfterSetOnAnOpenConnectionCountsFromTheSwitch() async throws {
        try await withProxy { proxy, _ in
            // Given an open connection that already carried 500 bytes back
            let client = try await FaultProxyTestClient.connect(port: proxy.port)
            try await client.send(Self.bytes(500))
            #expect(await client.receive(500).count == 500)

            // When
            proxy.mode = .cutAfter(bytes: 20)
            try await client.send(Self.bytes(100))

            // Then
            #expect(await client.waitUntilClosed())
            #expect(client.received == Self.bytes(500) + Self.bytes(20))
        }
    }

    @Test func refuseAlsoClosesOpenConnections() async throws {
        try await withProxy { proxy, _ in
            // Given
            let client = try await FaultProxyTestClient.connect(port: proxy.port)
            try await client.send(Self.bytes(10))
            #expect(await client.receive(10).count == 10)

            // When
            proxy.mode = .refuse

            // Then
            #expect(await client.waitUntilClosed())
            #expect(await FaultProxyPoll.until { proxy.openConnectionCount == 0 })
        }
    }

    @Test func stopClosesEverythingAndThePortThenRefuses() async throws {
        // Given one forwarded and one black-holed connection
        let upstream = try await FaultProxyEchoServer.start()
        let proxy = try await FaultProxy.start(upstreamPort: upstream.port, seed: 1)
        let forwarded = try await FaultProxyTestClient.connect(port: proxy.port)
        try await forwarded.send(Self.bytes(10))
        #expect(await forwarded.receive(10).count == 10)
        proxy.mode = .blackHole
        let silenced = try await FaultProxyTestClient.connect(port: proxy.port)

        // When
        await proxy.stop()
        await proxy.stop()

        // Then
        #expect(await forwarded.waitUntilClosed())
        #expect(await silenced.waitUntilClosed())
        #expect(proxy.openConnectionCount == 0)
        #expect(await FaultProxyPoll.until { upstream.connectionsClosed == 1 })
        // NB: the freed port is refused, unless another suite's server (they run in parallel, all on
        // port 0) has been given it meanwhile: then the connection is that server's, never the proxy's.
        if let stranger = try? await FaultProxyTestClient.connect(port: proxy.port) {
            #expect(await FaultProxyPoll.until(timeout: .milliseconds(500)) { proxy.openConnectionCount > 0 } == false)
            await stranger.close()
        }
        await upstream.stop()
    }

    // MARK: Decisions

    @Test func flakyDecisionsReplayBySeed() {
        // Given
        let mode = FaultProxy.Mode.flaky(latency: .zero ... .milliseconds(50), resetProbability: 0.3)
        let chunks = (0 ..< 200).map { 1 + $0 * 37 % 4096 }

        // When
        let first = Self.verdicts(of: mode, for: chunks, seed: 7)
        let replay = Self.verdicts(of: mode, for: chunks, seed: 7)
        let other = Self.verdicts(of: mode, for: chunks, seed: 8)

        // Then
        #expect(first == replay)
        #expect(first != other)
        #expect(first.contains(.cut))
        #expect(first.contains { if case .forward = $0 { true } else { false } })
    }

    @Test func flakyLatenciesStayInRangeAndResetProbabilityIsHonoured() {
        // Given
        let latency = Duration.milliseconds(5) ... .milliseconds(20)
        let chunks = Array(repeating: 100, count: 500)

        // When
        let never = Self.verdicts(of: .flaky(latency: latency, resetProbability: 0), for: chunks, seed: 3)
        let always = Self.verdicts(of: .flaky(latency: latency, resetProbability: 1), for: chunks, seed: 3)

        // Then
        #expect(always.allSatisfy { $0 == .cut })
        #expect(never.allSatisfy { verdict in
            guard case .forward(let delay) = verdict else { return false }
            return latency.contains(delay)
        })
    }

    @Test func cutAfterSplitsTheChunkThatCrossesTheLimit() {
        var generator = FaultProxy.SeededGenerator(seed: 0)
        let mode = FaultProxy.Mode.cutAfter(bytes: 100)

        #expect(mode.verdict(forChunkOf: 60, flowing: .down, alreadySent: 0, using: &generator) == .forward(after: .zero))
        #expect(mode.verdict(forChunkOf: 60, flowing: .down, alreadySent: 60, using: &generator) == .forwardThenCut(bytes: 40))
        #expect(mode.verdict(forChunkOf: 40, flowing: .down, alreadySent: 60, using: &generator) == .forwardThenCut(bytes: 40))
        #expect(mode.verdict(forChunkOf: 1, flowing: .down, alreadySent: 100, using: &generator) == .cut)
        #expect(mode.verdict(forChunkOf: 500, flowing: .up, alreadySent: 0, using: &generator) == .forward(after: .zero))
    }

    @Test func seededGeneratorIsDeterministic() {
        var first = FaultProxy.SeededGenerator(seed: 42)
        var second = FaultProxy.SeededGenerator(seed: 42)

        let a = (0 ..< 10).map { _ in first.next() }
        let b = (0 ..< 10).map { _ in second.next() }

        #expect(a == b)
        #expect(Set(a).count == 10)
    }

    // MARK: Helpers

    private func withProxy(
        upstreamEchoes: Bool = true,
        _ body: (FaultProxy, FaultProxyEchoServer) async throws -> Void
    ) async throws {
        let upstream = try await FaultProxyEchoServer.start(echoes: upstreamEchoes)
        let proxy = try await FaultProxy.start(upstreamPort: upstream.port, seed: 0xFA17)
        do {
            try await body(proxy, upstream)
        } catch {
            await proxy.stop()
            await upstream.stop()
            throw error
        }
        await proxy.stop()
        await upstream.stop()
    }

    private static func bytes(_ count: Int) -> [UInt8] {
        (0 ..< count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    }

    private static func verdicts(of mode: FaultProxy.Mode, for chunks: [Int], seed: UInt64) -> [FaultProxy.Verdict] {
        var generator = FaultProxy.SeededGenerator(seed: seed)
        return chunks.map { mode.verdict(forChunkOf: $0, flowing: .up, alreadySent: 0, using: &generator) }
    }
}
