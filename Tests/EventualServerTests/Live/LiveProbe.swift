import EventualAPI
import Foundation
import HTTPTypes
import Logging
import NIOWebSocket
import Synchronization
import Testing
import WSClient

/// A device's live channel as a test holds it: every message the server sent, and how the
/// channel closed.
final class LiveProbe: Sendable {
    private struct Heard {
        var messages: [LiveWire.Message] = []
        var closeCode: UInt16?
        var wentAway = false
        var ended = false
    }

    private let heard = Mutex(Heard())
    private let closing: AsyncStream<Void>.Continuation
    private let closeRequests: AsyncStream<Void>

    private init() {
        (closeRequests, closing) = AsyncStream.makeStream(of: Void.self)
    }

    /// Opens a channel to the server on `port` with `token`, subscribed to `collections`, and
    /// returns once the server said it is live (or fails after 5 s); at once if not `requireLive`.
    static func open(port: Int, token: String, collections: [String] = ["pantry_items"], requireLive: Bool = true,
                     sourceLocation: SourceLocation = #_sourceLocation) async throws -> LiveProbe {
        let probe = LiveProbe()
        var query = collections.map { "collection=\($0)" }.joined(separator: "&")
        if !query.isEmpty { query = "?" + query }
        var headers = HTTPFields()
        headers[.authorization] = "Bearer \(token)"
        let url = "ws://127.0.0.1:\(port)\(LiveWire.path)\(query)"
        Task {
            let close = try? await WebSocketClient.connect(url: url, configuration: .init(additionalHeaders: headers),
                                                           logger: Logger(label: "live-probe")) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for try await message in inbound.messages(maxSize: 1 << 16) {
                            guard case .text(let text) = message,
                                  let decoded = try? JSONDecoder().decode(LiveWire.Message.self, from: Data(text.utf8)) else { continue }
                            probe.heard.withLock { $0.messages.append(decoded) }
                        }
                    }
                    group.addTask {
                        for await _ in probe.closeRequests {
                            try await outbound.close(.normalClosure, reason: nil)
                            return
                        }
                    }
                    _ = try await group.next()
                    group.cancelAll()
                }
            }
            probe.heard.withLock { heard in
                heard.ended = true
                if let close, case .unknown(let code) = close.closeCode { heard.closeCode = code }
                heard.wentAway = close?.closeCode == .goingAway
            }
        }
        guard requireLive else { return probe }
        let live = await probe.waitUntil(within: .seconds(5)) { $0.contains { $0.type == .live } }
        try #require(live, "the live channel did not open: \(probe.messages)", sourceLocation: sourceLocation)
        return probe
    }

    var messages: [LiveWire.Message] { heard.withLock { $0.messages } }
    /// The positions signalled for `space`, in order.
    func positions(of space: String) -> [Int64] { messages.compactMap { $0.spaces?[space] } }
    var pulls: Int { messages.filter { $0.type == .pull }.count }
    var hasEnded: Bool { heard.withLock { $0.ended } }
    /// The close code when the server closed with one of the private range (4000-4999).
    var closeCode: UInt16? { heard.withLock { $0.closeCode } }
    /// Whether the server closed saying it is going away (it stops).
    var wentAway: Bool { heard.withLock { $0.wentAway } }

    /// Waits until `condition` holds of what was heard, or `within` passes (false then).
    func waitUntil(within limit: Duration, _ condition: @Sendable ([LiveWire.Message]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if condition(messages) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(messages)
    }

    /// Waits until the channel ended, or `within` passes (false then).
    func waitForEnd(within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline, !hasEnded { try? await Task.sleep(for: .milliseconds(10)) }
        return hasEnded
    }

    func close() {
        closing.yield()
    }
}
