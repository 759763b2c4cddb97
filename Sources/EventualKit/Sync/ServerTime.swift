import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization

/// The server's time as its last answer told it (the HTTP `Date` header), carried forward on this
/// process's monotonic clock: what a device with a wrong clock stamps its changes by.
public final class ServerTime: Sendable {
    private let reading = Mutex<(serverMillis: Int64, at: ContinuousClock.Instant)?>(nil)
    /// The device clocks that save what the answers tell (those still in use).
    private let listeners = Mutex<[WeakDeviceClock]>([])

    public init() {}

    /// The server's time now, in Unix milliseconds, if an answer has told it in this process.
    public func now() -> Int64? {
        reading.withLock { reading in
            reading.map { $0.serverMillis + (ContinuousClock.now - $0.at).milliseconds }
        }
    }

    /// Takes in an answer's `Date` header (`Tue, 24 Nov 2026 06:03:01 GMT`), and has every device
    /// clock listening save it.
    func record(dateHeader: String) async {
        guard let date = Self.parse(dateHeader) else { return }
        // NB: the header is cut to the second: the server's time was somewhere in that second.
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded()) + 500
        reading.withLock { $0 = (millis, ContinuousClock.now) }
        // NB: saved before the answer goes on, so that a command that ends right after it leaves
        // the offset for the next one (a write only when it says more: `ServerClockTable`).
        let clocks = listeners.withLock { listeners in
            listeners.removeAll { $0.clock == nil }
            return listeners.compactMap(\.clock)
        }
        for clock in clocks { await clock.heard(serverNow: millis) }
    }

    /// Has `clock` hear every later answer's time (while it is in use: it is held weakly).
    func tell(_ clock: DeviceClock) {
        listeners.withLock { $0.append(WeakDeviceClock(clock: clock)) }
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
        if let date = answer.0.headerFields[.date] { await serverTime.record(dateHeader: date) }
        return answer
    }
}

/// A device clock a `ServerTime` tells, without keeping it (and its store) alive.
private struct WeakDeviceClock: Sendable {
    weak var clock: DeviceClock?
}
