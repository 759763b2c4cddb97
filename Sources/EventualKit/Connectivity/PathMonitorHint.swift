#if canImport(Network)
import Network

/// On Apple platforms: the system's view of the network path as a hint for the monitor. A path
/// that becomes satisfied makes it probe the server at once; the server's answer stays the truth.
public final class PathMonitorHint: Sendable {
    private let monitor = NWPathMonitor()

    public init(notifying connectivity: ConnectivityMonitor) {
        monitor.pathUpdateHandler = { path in
            if path.status == .satisfied { connectivity.hintNetworkChanged() }
        }
        monitor.start(queue: .global(qos: .utility))
    }

    deinit { monitor.cancel() }
}
#endif
