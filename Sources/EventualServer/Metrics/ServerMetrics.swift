import CoreMetrics
import Foundation
import Prometheus
import Synchronization

/// The server's measurements, kept in its own Prometheus registry (handed in, never the global
/// `MetricsSystem`, so that two servers in one process, as in the tests, count apart) and served
/// as text at `GET /metrics`.
public final class ServerMetrics: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let inFlight = Atomic<Int>(0)
    private let served = Atomic<Int>(0)
    private let inFlightGauge: CoreMetrics.Gauge
    private let databaseWait: CoreMetrics.Timer
    private let syncChanges: [String: CoreMetrics.Counter]
    private let loginFailures: CoreMetrics.Counter
    private let throttled: [String: CoreMetrics.Counter]
    /// The counter and timer of each route, method and status seen so far.
    /// NB: made once per key; making them per request cost a registry look-up and several allocations.
    private let perRoute = Mutex<[RouteKey: (CoreMetrics.Counter, CoreMetrics.Timer)]>([:])

    private struct RouteKey: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
        ]
        self.factory = factory
        inFlightGauge = CoreMetrics.Gauge(label: "http_requests_in_flight", factory: factory)
        databaseWait = CoreMetrics.Timer(label: "database_connection_wait_seconds", factory: factory)
        syncChanges = Dictionary(uniqueKeysWithValues: ["applied", "duplicate", "rejected"].map {
            ($0, CoreMetrics.Counter(label: "sync_pushed_changes_total", dimensions: [("outcome", $0)], factory: factory))
        })
        loginFailures = CoreMetrics.Counter(label: "login_failures_total", factory: factory)
        throttled = Dictionary(uniqueKeysWithValues: ["login", "registration"].map {
            ($0, CoreMetrics.Counter(label: "throttled_requests_total", dimensions: [("kind", $0)], factory: factory))
        })
    }

    /// The Prometheus text exposition of every metric.
    public func exposition() -> String { registry.emitToString() }

    /// Requests started and not yet answered.
    public var requestsInFlight: Int { inFlight.load(ordering: .relaxed) }
    /// Requests answered since start.
    public var requestsServed: Int { served.load(ordering: .relaxed) }

    func requestStarted() {
        let now = inFlight.wrappingAdd(1, ordering: .relaxed).newValue
        inFlightGauge.record(now)
    }

    /// One answered request. `route` is the route's template (`/products/{id}`), never a raw path.
    func requestFinished(route: String, method: String, status: Int, duration: Duration) {
        let now = inFlight.wrappingSubtract(1, ordering: .relaxed).newValue
        served.wrappingAdd(1, ordering: .relaxed)
        inFlightGauge.record(now)
        let key = RouteKey(route: route, method: method, status: status)
        let factory = self.factory
        let (counter, timer) = perRoute.withLock { known in
            if let pair = known[key] { return pair }
            let dimensions = [("route", route), ("method", method), ("status", String(status))]
            let pair = (CoreMetrics.Counter(label: "http_requests_total", dimensions: dimensions, factory: factory),
                        CoreMetrics.Timer(label: "http_request_duration_seconds", dimensions: dimensions, factory: factory))
            known[key] = pair
            return pair
        }
        counter.increment()
        timer.recordNanoseconds(duration.nanoseconds)
    }

    /// Time spent waiting for a database connection (the SQLite writer or a PostgreSQL pool slot).
    func databaseWaited(_ duration: Duration) { databaseWait.recordNanoseconds(duration.nanoseconds) }

    func syncPushed(applied: Int, duplicate: Int, rejected: Int) {
        if applied > 0 { syncChanges["applied"]?.increment(by: applied) }
        if duplicate > 0 { syncChanges["duplicate"]?.increment(by: duplicate) }
        if rejected > 0 { syncChanges["rejected"]?.increment(by: rejected) }
    }

    func loginFailed() { loginFailures.increment() }
    func loginThrottled() { throttled["login"]?.increment() }
    func registrationThrottled() { throttled["registration"]?.increment() }
}

extension Duration {
    /// The duration in whole nanoseconds.
    var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
