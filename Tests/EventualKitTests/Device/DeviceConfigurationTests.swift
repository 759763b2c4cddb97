import Foundation
import Testing
@testable import EventualKit

@Suite("Device configuration: one set of settings and folders that every app embeds")
struct DeviceConfigurationTests {
    private let device = DeviceConfiguration(dataDirectory: URL(fileURLWithPath: "/data/app"),
                                             serverURL: URL(string: "http://127.0.0.1:8080")!, databaseName: "app.sqlite")

    @Test func theSavedSignInAndEachPersonsDatabaseLiveUnderTheDataDirectory() {
        #expect(device.secretsDirectory.path == "/data/app/secrets")
        #expect(device.userDirectory("0193-abc").path == "/data/app/users/0193-abc")
        #expect(device.databasePath("0193-abc") == "/data/app/users/0193-abc/app.sqlite")
    }

    @Test func aUserIDFromTheServerNeverLeavesThePersonsFolder() {
        #expect(device.databasePath("../../etc") == "/data/app/users/etc/app.sqlite")
    }

    /// An app's configuration as the apps have them: the device's, and one setting of its own.
    private struct ShopConfiguration: AppConfiguration {
        var device: DeviceConfiguration
        var basketSize = 10
    }

    @Test func anAppsConfigurationReadsAndSetsTheDevicesSettingsAsItsOwn() {
        var configuration = ShopConfiguration(device: device)
        configuration.passwordRounds = 100_000
        configuration.timeouts.firstByte = .seconds(9)
        configuration.analyticsEnabled = false
        configuration.basketSize = 3
        #expect(configuration.device.passwordRounds == 100_000)
        #expect(configuration.device.timeouts.firstByte == .seconds(9))
        #expect(!configuration.device.analyticsEnabled)
        #expect(configuration.localCommandSyncBudget == .milliseconds(300))
        #expect(configuration.databasePath("u1") == "/data/app/users/u1/app.sqlite")
        #expect(configuration.secretsDirectory == device.secretsDirectory)
    }
}
