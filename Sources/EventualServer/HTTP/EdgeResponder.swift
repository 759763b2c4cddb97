import EventualAPI
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The outermost responder: every request, routed or not, passes here once. It caps the body
/// size, sets the request scope, turns every error into the JSON error shape, counts the request
/// in the metrics, and logs one line per request (id, method, path, status, duration; never a
/// header value, a body, a password or a token).
struct EdgeResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context == ServerRequestContext {
    typealias Context = ServerRequestContext

    let inner: Inner
    let maxBodySize: Int
    let metrics: ServerMetrics
    let trustForwardedFor: Bool
    /// The methods each path takes, to tell "no such path" (404) from "not this method" (405).
    let routes: ContractRoutes
    /// The statuses each operation documents: an answer outside them is logged, to be documented.
    let contract: ContractLimits
    /// Paths whose bodies may be larger than `maxBodySize` (a scan with its photo), and their limits.
    var bodyLimits: [String: Int] = [:]
    /// Limits of the paths under a prefix (an attachment's chunks, whose path holds its digest).
    var bodyLimitsUnder: [(prefix: String, limit: Int)] = []
    /// Barcode look-ups answered without the router (nil: the router answers them).
    var lookups: LookupFastPath? = nil
    /// The answers sent compressed to a client that accepts it (nil: none).
    var compression: AnswerCompression? = nil

    /// The body could not be read to its end: the client hung up or sent a broken stream.
    private struct BodyUnreadable: Error {
        let underlying: any Error
    }

    func respond(to request: Request, context: Context) async throws -> Response {
        let start = ContinuousClock.now
        metrics.requestStarted()
        var response: Response
        let fastBarcode = lookups == nil ? nil : LookupFastPath.barcode(of: request)
        do {
            var request = request
            let limit = bodyLimit(for: request.uri.path)
            if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
                throw tooLarge(limit)
            }
            do {
                _ = try await request.collectBody(upTo: limit)
            } catch let error as HTTPError where error.status == .contentTooLarge {
                throw tooLarge(limit)
            } catch is NIOTooManyBytesError {
                // NB: a chunked body has no Content-Length to refuse up front; collecting stops here.
                throw tooLarge(limit)
            } catch {
                throw BodyUnreadable(underlying: error)
            }
            let scope = RequestScope(
                authorization: request.headers[.authorization],
                remoteAddress: context.remoteAddress,
                forwardedFor: trustForwardedFor ? request.headers[HeaderNames.forwardedFor] : nil,
                logger: context.logger,
                ifNoneMatch: request.headers[.ifNoneMatch]
            )
            response = try await RequestScope.$current.withValue(scope) {
                if let lookups, let fastBarcode { return try await lookups.respond(barcode: fastBarcode) }
                return try await inner.respond(to: request, context: context)
            }
            if let compression { response = try await compression.apply(to: response, for: request) }
            for name in [HTTPField.Name.eTag, .contentRange] {
                if let value = response.headers[name], value.contains("%"), let decoded = value.removingPercentEncoding {
                    // NB: the generated server percent-encodes header values ("\"p1\"" leaves as "%22p1%22",
                    // "bytes 0-9/10" as "bytes%200-9%2F10"), which no HTTP cache or download reads as an
                    // entity tag or a range. Generated clients decode either form.
                    response.headers[name] = decoded
                }
            }
            if response.status.code >= 400, response.headers[.contentType] == nil {
                // NB: the router answers an unknown route with a bare 404; give it our error shape.
                throw HTTPError(response.status)
            }
        } catch let error as BodyUnreadable {
            // NB: a client that hangs up mid-body is not a server failure; at error level it would let
            // anyone flood the error log. Nobody reads this answer.
            context.logger.debug("client went away while sending the body", metadata: [
                "path": "\(request.uri.path)", "error": "\(LogSafe.describe(error.underlying))",
            ])
            response = errorResponse(ErrorMapping.Outcome(status: .badRequest, message: "The request body could not be read to its end",
                                                          isServerFault: false))
        } catch {
            let outcome = ErrorMapping.outcome(for: error)
            if let level = outcome.logLevel {
                context.logger.log(level: level, "request failed", metadata: [
                    "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "status": "\(outcome.status.code)",
                    "error": "\(LogSafe.describe(error))",
                ])
            }
            var message = outcome.message
            var status = outcome.status
            var allowed: [HTTPRequest.Method] = []
            if outcome.status == .notFound, error is HTTPError {
                allowed = routes.methods(for: request.uri.path)
                if allowed.isEmpty {
                    message = "No route for \(request.method.rawValue) \(request.uri.path)"
                } else {
                    status = .methodNotAllowed
                    message = "\(request.method.rawValue) is not allowed on \(request.uri.path): use "
                        + allowed.map(\.rawValue).joined(separator: ", ")
                }
            }
            response = errorResponse(ErrorMapping.Outcome(status: status, message: message, isServerFault: outcome.isServerFault,
                                                          retryAfter: outcome.retryAfter, code: outcome.code,
                                                          received: outcome.received))
            if !allowed.isEmpty { response.headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ") }
        }
        response.headers[HeaderNames.requestID] = context.id
        // NB: every answer says what it is (a blob's type is recognised from its bytes at upload);
        // a browser must not guess another, such as HTML out of a "photo" someone uploaded.
        response.headers[HeaderNames.contentTypeOptions] = "nosniff"
        let elapsed = ContinuousClock.now - start
        let route = fastBarcode == nil ? context.endpointPath : LookupFastPath.route
        if let route, let operation = contract.operation(method: request.method.rawValue, route: route),
           !operation.statuses.contains(Int(response.status.code)), !Self.undocumentedEverywhere.contains(response.status.code) {
            context.logger.warning("answered a status its operation does not document in openapi.yaml", metadata: [
                "operation": .string(operation.id), "status": .stringConvertible(response.status.code),
            ])
        }
        metrics.requestFinished(route: route ?? "unmatched", method: request.method.rawValue,
                                status: Int(response.status.code), duration: elapsed)
        // NB: the status and duration are formatted when the line is written (off the request path).
        context.logger.info("request", metadata: [
            "method": .string(request.method.rawValue),
            "path": .string(request.uri.path),
            "status": .stringConvertible(response.status.code),
            "duration_ms": .stringConvertible(Milliseconds(elapsed)),
        ])
        return response
    }

    /// The statuses the document's description gives for every operation rather than under each:
    /// the server's own failure (500, never for anything a client sent) and a database that is
    /// busy, full or unreachable (503, with `Retry-After`).
    static var undocumentedEverywhere: Set<Int> { [500, 503] }

    private func bodyLimit(for path: String) -> Int {
        if let limit = bodyLimits[path] { return limit }
        return bodyLimitsUnder.first { path.hasPrefix($0.prefix) }?.limit ?? maxBodySize
    }

    private func tooLarge(_ limit: Int) -> HTTPError {
        HTTPError(.contentTooLarge, message: "The request body is larger than \(limit / 1024) KiB")
    }

    private func errorResponse(_ outcome: ErrorMapping.Outcome) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if outcome.status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        if let retryAfter = outcome.retryAfter { headers[.retryAfter] = String(retryAfter) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let body = (try? encoder.encode(ErrorBody(status: outcome.status, message: outcome.message, code: outcome.code,
                                                            received: outcome.received))) ?? Data()
        return Response(status: outcome.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

/// A duration in milliseconds with two decimals, formatted only if a line is written.
private struct Milliseconds: CustomStringConvertible, Sendable {
    let duration: Duration
    init(_ duration: Duration) { self.duration = duration }
    // NB: C's own "%.2f" (what String(format:) prints), without Foundation's formatter.
    var description: String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 32) { buffer in
            _ = withVaList([duration.fractionalMilliseconds]) { vsnprintf(buffer.baseAddress!, buffer.count, "%.2f", $0) }
            return String(cString: buffer.baseAddress!)
        }
    }
}

/// Header names made once (a generic type cannot hold static stored properties).
private enum HeaderNames {
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let requestID = HTTPField.Name("X-Request-Id")!
    static let contentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
}
