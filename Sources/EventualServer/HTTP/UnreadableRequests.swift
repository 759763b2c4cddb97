import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1

/// Answers a request the HTTP parser refuses, at once, with the JSON error every other refusal
/// has, and closes its connection: a request line that is not HTTP, a control byte in a header, a
/// negative or doubled `Content-Length`, a request line or header block past the decoder's limits
/// (414 and 431), and an HTTP/1.1 request without `Host` (RFC 9112 §3.2: a 400).
///
/// NB: NIO's own error handler answers such a request with an empty 400, and the server had it
/// off (the router answers errors); but the router never hears of a request the parser refused.
/// Without this the connection got no status at all and stayed open for as long as the client
/// liked, past the idle timeout: a few hundred such requests filled `--max-connections`.
///
/// The connection is closed gracefully ("lingering"): the answer is written, the server's side of
/// the socket is shut, and what the client still sends (the rest of a 1 MB request line) is read
/// and dropped for at most `lingering`, so that closing with unread bytes does not reset the
/// connection and lose the answer before the client has read it.
enum UnreadableRequests {
    /// Adds both halves around the HTTP decoder of a pipeline that
    /// `configureUpgradableHTTPServerPipeline` set up: the line watcher in front of it, the
    /// answerer right after it.
    /// `longestLine`: the decoder's `maxHeaderFieldSize`, which its request line is held to too.
    static func install(in pipeline: ChannelPipeline.SynchronousOperations, longestLine: Int,
                        lingering: TimeAmount = .seconds(2)) throws {
        let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
        let line = RequestLine(longest: longestLine)
        let watcher = RequestLineWatcher(line: line)
        try pipeline.addHandler(watcher, position: .before(decoder))
        try pipeline.addHandler(Answerer(line: line, watcher: watcher, lingering: lingering), position: .after(decoder))
    }

    /// The status and words for what the parser refused; `inRequestLine`: the request's first line
    /// is as long as the decoder reads a field, so an overflow is the line's.
    static func refusal(for error: HTTPParserError, inRequestLine: Bool) -> (HTTPResponseStatus, String) {
        switch error {
        case .headerOverflow where inRequestLine:
            return (.uriTooLong, "The request line is longer than the server reads (80 KiB): send a shorter URL")
        case .headerOverflow:
            return (.requestHeaderFieldsTooLarge,
                    "The request's headers are larger than the server reads (80 KiB in all, 1,000 at most)")
        case .invalidContentLength, .unexpectedContentLength:
            return (.badRequest, "The request's Content-Length is not one non-negative number")
        case .invalidHeaderToken, .invalidCharactersUsed, .lfExpected, .strictModeAssertion:
            return (.badRequest, "A header of the request holds a character HTTP does not allow (a control character)")
        case .invalidURL:
            return (.badRequest, "The request's URL holds a character HTTP does not allow")
        case .invalidMethod, .invalidVersion, .invalidConstant:
            return (.badRequest, "The request does not start with an HTTP request line (METHOD /path HTTP/1.1)")
        case .invalidChunkSize:
            return (.badRequest, "The request's chunked body is malformed")
        default:
            return (.badRequest, "The request is not valid HTTP/1.1")
        }
    }

    /// How long the first line of the request on the connection is, as far as it has come.
    /// Shared by the two halves, on the channel's event loop.
    final class RequestLine {
        let longest: Int
        /// Bytes of the line so far (all of them once `ended`).
        var length = 0
        var ended = false

        init(longest: Int) { self.longest = longest }

        /// Whether the decoder's overflow is the line's: it is as long as the decoder reads a field.
        var overflows: Bool { length >= longest }

        /// A new request begins.
        func reset() {
            length = 0
            ended = false
        }
    }

    /// In front of the decoder: notes when the first line of a request has arrived.
    /// NB: a later request's line is taken to start once the answerer has seen the previous request
    /// end, which a client that pipelines may already have sent in the same read: its overflow may
    /// then be called a header's (431).
    final class RequestLineWatcher: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer
        private let line: RequestLine

        init(line: RequestLine) { self.line = line }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if !line.ended {
                let bytes = unwrapInboundIn(data).readableBytesView
                if let end = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                    line.length += bytes.distance(from: bytes.startIndex, to: end)
                    line.ended = true
                } else {
                    line.length += bytes.count
                }
            }
            context.fireChannelRead(data)
        }
    }

    /// After the decoder: answers what it refused, and HTTP/1.1 without `Host`; otherwise passes
    /// everything through. Leaves the pipeline when the connection is upgraded to a live channel.
    final class Answerer: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias InboundOut = HTTPServerRequestPart
        typealias OutboundIn = HTTPServerResponsePart
        typealias OutboundOut = HTTPServerResponsePart

        private let line: RequestLine
        /// Leaves with this handler when the connection is upgraded: a live channel's frames are no request lines.
        private let watcher: RequestLineWatcher
        private let lingering: TimeAmount
        /// A response head went out and its end has not: a second answer would garble it.
        private var responding = false
        /// The connection was answered here and is closing: nothing more goes in or out.
        private var refused = false
        /// The 101 of a live channel's upgrade went out: the handler leaves at its flush.
        private var upgrading = false

        init(line: RequestLine, watcher: RequestLineWatcher, lingering: TimeAmount) {
            self.line = line
            self.watcher = watcher
            self.lingering = lingering
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !refused else { return }
            switch unwrapInboundIn(data) {
            case .head(let head) where head.version == .http1_1 && !head.headers.contains(name: "Host"):
                return refuse(context, .badRequest, "An HTTP/1.1 request must name its Host")
            case .end:
                line.reset()
            case .head, .body:
                break
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            switch unwrapOutboundIn(data) {
            case .head(let head) where head.status == .switchingProtocols:
                // NB: from here on the connection carries WebSocket frames, which are not this
                // handler's types: it leaves once the 101 is flushed (`flush`). Removed within this
                // write, the 101 was never flushed and the upgrade hung.
                upgrading = true
            case .head:
                responding = true
            case .end:
                responding = false
            case .body:
                break
            }
            context.write(data, promise: promise)
        }

        func flush(context: ChannelHandlerContext) {
            context.flush()
            guard upgrading else { return }
            context.pipeline.syncOperations.removeHandler(watcher, promise: nil)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            guard !refused else { return }  // NB: the decoder reports every later read as an error too
            // NB: an end of file mid-request is a client that hung up: nobody to answer, and the
            // responder logs it as such.
            guard let parsing = error as? HTTPParserError, parsing != .invalidEOFState else { return context.fireErrorCaught(error) }
            let (status, message) = UnreadableRequests.refusal(for: parsing, inRequestLine: line.overflows)
            refuse(context, status, message)
        }

        /// Writes the JSON error (unless a response is under way), then closes the connection gracefully.
        private func refuse(_ context: ChannelHandlerContext, _ status: HTTPResponseStatus, _ message: String) {
            refused = true
            guard !responding else { return context.close(promise: nil) }
            let answer = HTTPResponse.Status(code: Int(status.code), reasonPhrase: status.reasonPhrase)
            let body = (try? JSONEncoder().encode(ErrorBody(status: answer, message: message))) ?? Data()
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
            headers.add(name: "Content-Length", value: "\(body.count)")
            headers.add(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
            let channel = context.channel, lingering = self.lingering
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                channel.close(mode: .output, promise: nil)
                channel.eventLoop.scheduleTask(in: lingering) { channel.close(promise: nil) }
            }
        }
    }
}
