import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A stand-in for an OpenAI-compatible chat-completions API, over real HTTP on a loopback port:
/// it records every request and answers as told (a completion, an error status, a body that is
/// not a completion, or nothing at all).
public final class FakeVisionServer: Sendable {
    public enum Behaviour: Sendable {
        /// 200 with a chat completion whose `choices[0].message.content` is this text.
        case answer(String)
        /// This status and body, as sent.
        case raw(status: Int, body: String)
        /// Reads the request and never answers.
        case hang
    }

    /// A request as the fake received it.
    public struct Request: Sendable {
        public let method: String
        public let uri: String
        /// Header names in lower case.
        public let headers: [String: String]
        public let body: Data

        /// The body as JSON, if it is.
        public var json: [String: Any]? { try? JSONSerialization.jsonObject(with: body) as? [String: Any] }
    }

    /// The API's base URL, as `--vision-url` takes it (`/chat/completions` is appended by the server).
    public let baseURL: URL
    private let listener: any Channel
    private let state: Mutex<(behaviour: Behaviour, requests: [Request])>

    private init(listener: any Channel, behaviour: Behaviour) {
        self.listener = listener
        self.state = Mutex((behaviour, []))
        baseURL = URL(string: "http://127.0.0.1:\(listener.localAddress!.port!)/v1")!
    }

    public static func start(_ behaviour: Behaviour) async throws -> FakeVisionServer {
        let box = StateBox(behaviour)
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(box: box))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let server = FakeVisionServer(listener: listener, behaviour: behaviour)
        box.server.withLock { $0 = server }
        return server
    }

    public func set(_ behaviour: Behaviour) {
        state.withLock { $0.behaviour = behaviour }
    }

    public var requests: [Request] { state.withLock { $0.requests } }

    public func stop() async {
        try? await listener.close()
    }

    fileprivate func received(_ request: Request) -> Behaviour {
        state.withLock { state in
            state.requests.append(request)
            return state.behaviour
        }
    }

    /// A chat completion answering `content`, as OpenAI-compatible servers shape it.
    public static func completion(_ content: String) -> String {
        let object: [String: Any] = [
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 1_700_000_000, "model": "fake-vision",
            "choices": [["index": 0, "message": ["role": "assistant", "content": content], "finish_reason": "stop"]],
            "usage": ["prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13],
        ]
        return String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    /// Lets the handler reach the server, which exists only once the listener is bound.
    private final class StateBox: Sendable {
        let server = Mutex<FakeVisionServer?>(nil)
        let initial: Behaviour
        init(_ initial: Behaviour) { self.initial = initial }

        func received(_ request: Request) -> Behaviour {
            server.withLock { $0 }?.received(request) ?? initial
        }
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let box: StateBox
        var head: HTTPRequestHead?
        var body = Data()

        init(box: StateBox) { self.box = box }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = Data()
            case .body(var buffer):
                body.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
            case .end:
                guard let head else { return }
                var headers: [String: String] = [:]
                for (name, value) in head.headers { headers[name.lowercased()] = value }
                let behaviour = box.received(Request(method: head.method.rawValue, uri: head.uri, headers: headers, body: body))
                switch behaviour {
                case .hang:
                    return
                case .answer(let content):
                    respond(context: context, status: 200, body: FakeVisionServer.completion(content))
                case .raw(let status, let text):
                    respond(context: context, status: status, body: text)
                }
            }
        }

        private func respond(context: ChannelHandlerContext, status: Int, body: String) {
            var buffer = context.channel.allocator.buffer(capacity: body.utf8.count)
            buffer.writeString(body)
            let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status),
                                        headers: ["Content-Type": "application/json", "Content-Length": "\(buffer.readableBytes)"])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}

/// Runs `body` with a fake vision server, stopped afterwards.
public func withFakeVisionServer<T: Sendable>(_ behaviour: FakeVisionServer.Behaviour,
                                              _ body: @Sendable (FakeVisionServer) async throws -> T) async throws -> T {
    let server = try await FakeVisionServer.start(behaviour)
    do {
        let value = try await body(server)
        await server.stop()
        return value
    } catch {
        await server.stop()
        throw error
    }
}
