import Foundation
import Hummingbird
import Logging

/// The outermost responder: every request, routed or not, passes here once. It caps the body
/// size, sets the request scope, turns every error into the JSON error shape, and logs one line
/// per request (id, method, path, status, duration; never a body, a password or a token).
struct EdgeResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context == BasicRequestContext {
    typealias Context = BasicRequestContext

    let inner: Inner
    let maxBodySize: Int

    func respond(to request: Request, context: Context) async throws -> Response {
        let start = ContinuousClock.now
        var response: Response
        do {
            var request = request
            if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBodySize {
                throw HTTPError(.contentTooLarge, message: "The request body is larger than \(maxBodySize / 1024) KiB")
            }
            do {
                _ = try await request.collectBody(upTo: maxBodySize)
            } catch let error as HTTPError where error.status == .contentTooLarge {
                throw HTTPError(.contentTooLarge, message: "The request body is larger than \(maxBodySize / 1024) KiB")
            }
            let scope = RequestScope(authorization: request.headers[.authorization], logger: context.logger)
            response = try await RequestScope.$current.withValue(scope) {
                try await inner.respond(to: request, context: context)
            }
            if response.status.code >= 400, response.headers[.contentType] == nil {
                // NB: the router answers an unknown route with a bare 404; give it our error shape.
                throw HTTPError(response.status)
            }
        } catch {
            response = errorResponse(for: error, request: request, context: context)
        }
        response.headers[.init("X-Request-Id")!] = context.id
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        context.logger.info("request", metadata: [
            "method": "\(request.method.rawValue)",
            "path": "\(request.uri.path)",
            "status": "\(response.status.code)",
            "duration_ms": "\(String(format: "%.2f", milliseconds))",
        ])
        return response
    }

    private func errorResponse(for error: any Error, request: Request, context: Context) -> Response {
        let outcome = ErrorMapping.outcome(for: error)
        if outcome.isServerFault {
            context.logger.error("request failed", metadata: [
                "path": "\(request.uri.path)", "error": "\(String(reflecting: error))",
            ])
        }
        var message = outcome.message
        if outcome.status == .notFound, error is HTTPError {
            message = "No route for \(request.method.rawValue) \(request.uri.path)"
        }
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if outcome.status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let body = (try? encoder.encode(ErrorBody(status: outcome.status, message: message))) ?? Data()
        return Response(status: outcome.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
