import EventualKit
import Foundation

/// SpendiQ on a device: the device's configuration, how long reads of the server wait, and the
/// person's calendar. Its `maxOfflineAge` is also the age after which the device's data is wiped
/// at the next start (seed 002, F5).
public struct SpendingConfiguration: AppConfiguration {
    public var device: DeviceConfiguration
    /// How long reading offers or insights waits for the server before showing the saved copy.
    public var networkReadTimeout: Duration = .seconds(4)
    /// Offers younger than this are shown without asking the server (seed 003: 10 minutes).
    public var offersMaxAge: Duration = .seconds(10 * 60)

    public init(dataDirectory: URL, serverURL: URL) {
        device = DeviceConfiguration(dataDirectory: dataDirectory, serverURL: serverURL, databaseName: "spending.sqlite")
    }

    /// The person's weeks start on Monday, in their time zone.
    var calendar: Calendar {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = device.timeZone
        return calendar
    }
}
