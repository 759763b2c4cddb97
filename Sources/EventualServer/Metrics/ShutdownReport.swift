import Logging
import ServiceLifecycle

/// Says what a graceful shutdown did. Services stop in reverse order, the HTTP server first, so
/// this one hears of the shutdown once the server has stopped accepting connections and has
/// answered the requests in flight; the database and the hashing pool stop after it.
struct ShutdownReport: Service {
    let metrics: ServerMetrics
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        logger.notice("graceful shutdown: stopped accepting connections and answered the requests in flight", metadata: [
            "requests_served": "\(metrics.requestsServed)", "requests_in_flight": "\(metrics.requestsInFlight)",
        ])
    }
}
