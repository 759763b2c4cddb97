import EventualKit
import Foundation

/// The pantry on a device: the device's configuration, and how a barcode look-up uses the network.
public struct PantryConfiguration: AppConfiguration {
    public var device: DeviceConfiguration
    /// How a barcode look-up uses the network and the saved copy.
    public var lookupPolicy: CachePolicy = .networkFirst(timeout: .seconds(4))

    public init(dataDirectory: URL, serverURL: URL) {
        device = DeviceConfiguration(dataDirectory: dataDirectory, serverURL: serverURL, databaseName: "pantry.sqlite")
    }
}
