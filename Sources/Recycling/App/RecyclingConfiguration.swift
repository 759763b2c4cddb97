import EventualAPI
import EventualKit
import Foundation

/// SustainU on a device: the device's configuration, and how long scans and reads wait.
public struct RecyclingConfiguration: AppConfiguration {
    public var device: DeviceConfiguration
    /// How long a scan may wait to connect and for the first byte: the server hands its photo to
    /// a vision model that may take 20 s.
    public var scanTimeouts = ServerLink.Timeouts(connect: .seconds(3), firstByte: .seconds(25))
    /// How long a command, started with scans or visits waiting, waits for them to go out once
    /// the server answered (within the local budget), so that it can announce the results.
    public var catchUpBudget: Duration = .seconds(1)
    /// How long `scan` waits for the server's classification, once the server answered, before
    /// saying the scan waits (it is classified later).
    public var scanBudget: Duration = .seconds(10)
    /// How long a read of server data (points, score, tips) waits for the network when the device
    /// has no saved copy at all (the first load), before saying it needs a connection.
    public var refreshBudget: Duration = .seconds(3)
    /// This device's clock, in Unix milliseconds, as scans are stamped and timed by it (a test
    /// sets a wrong one).
    public var wallClock: @Sendable () -> Int64 = { UnixMillis.now() }

    public init(dataDirectory: URL, serverURL: URL) {
        device = DeviceConfiguration(dataDirectory: dataDirectory, serverURL: serverURL, databaseName: "sustainu.sqlite")
    }

    /// Where photos of scans wait until the server has classified them.
    func photosDirectory(_ userID: String) -> URL { userDirectory(userID).appendingPathComponent("scans", isDirectory: true) }
}
