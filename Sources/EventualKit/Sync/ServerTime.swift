import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization

/// The server's time as its last answer told it (the HTTP `Date` header), carried forward on this
/// process's monotonic clock: what a device with a wrong clock stamps its changes by.
public final class ServerTime: Sendable {
    private let reading = Mutex<(serverMillis: Int64, at: ContinuousClock.Instant)?>(nil)

    public init() {}

    /// The server's time now, in Unix milliseconds, if an answer has told it in this process.
    public func now() -> Int64? {
        reading.withLock { reading in
            reading.map { $0.serverMillis + (ContinuousClock.now - $0.at).milliseconds }
        }
    }

    /// Takes in an answer's `Date` header (`Tue, 24 Nov 2026 06:03:01 GMT`).
    func record(dateHeader: String) {
        guard let date = Self.parse(dateHeader) else { return }
        // NB: the header is cut to the second: the server's time was somewhere in that second.
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded()) + 500
        reading.withLock { $0 = (millis, ContinuousClock.now) }
    }

    static func parse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text.trimmingCharacters(in: .whitespaces))
    }
}

/// Reads the `Date` of every answer into `ServerTime`.
struct ServerTimeMiddleware: ClientMiddleware {
    let serverTime: ServerTime

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let answer = try await next(request, body, baseURL)
        if let date = answer.0.headerFields[.date] { serverTime.record(dateHeader: date) }
        return answer
    }
}
