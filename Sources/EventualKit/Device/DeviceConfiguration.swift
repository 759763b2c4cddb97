import EventualAPI
import Foundation
import Logging

/// What every app on a device is configured with: where its data lives, which server it talks
/// to, how patient it is, and the person's choices. An app's own configuration embeds it
/// (`AppConfiguration`) and adds only what is its own.
public struct DeviceConfiguration: Sendable {
    /// Holds the saved sign-in (`secrets/`) and the signed-in person's data (`users/<id>/`).
    public var dataDirectory: URL
    public var serverURL: URL
    /// The name of a person's database file in their folder, e.g. "pantry.sqlite".
    public let databaseName: String
    /// The deadline of one whole request: a backstop, as a request is cut at its first silence
    /// (`timeouts`), never for being slow (`ServerLink`).
    public var requestTimeout: Duration = ServerLink.backstop
    /// How long a request may wait to connect, and then for the server's first byte.
    public var timeouts = ServerLink.Timeouts(connect: .seconds(3), firstByte: .seconds(5))
    /// How long a command that answers from this device waits for the network at all: for what
    /// it queued to go out, to learn whether the server answers. The engine sends the rest later.
    public var localCommandSyncBudget: Duration = .milliseconds(300)
    /// How long a sign-out waits for what the person queued to go out first, once the server
    /// answered within `localCommandSyncBudget` (a silent or absent server is not waited for).
    public var signOutSendBudget: Duration = .seconds(1)
    /// PBKDF2 rounds of the offline-sign-in verifier.
    public var passwordRounds = 210_000
    /// How long after the last online sign-in an offline one is allowed.
    public var maxOfflineAge: Duration = .seconds(7 * 24 * 3600)
    /// Unix milliseconds now, as the sign-in rules read it: injectable, so tests can live
    /// through a week in a moment.
    public var clock: @Sendable () -> Int64 = { UnixMillis.now() }
    /// The person's time zone: their days, weeks and reminders.
    public var timeZone: TimeZone = .current
    public var sync = SyncConfiguration()
    /// Whether usage events are recorded and sent (the person may turn them off).
    public var analyticsEnabled = true
    /// What the sync engine logs (to stderr by default): a command-line app wants only the worst.
    public var engineLogLevel: Logger.Level = .critical

    public init(dataDirectory: URL, serverURL: URL, databaseName: String) {
        self.dataDirectory = dataDirectory
        self.serverURL = serverURL
        self.databaseName = databaseName
    }

    /// Where the saved sign-in and the queued sign-outs are kept.
    public var secretsDirectory: URL { DeviceFolders(dataDirectory).secrets }

    /// The folder of a person's data, which sign-out removes whole.
    public func userDirectory(_ userID: String) -> URL { DeviceFolders(dataDirectory).user(userID) }

    /// The path of a person's database.
    public func databasePath(_ userID: String) -> String { userDirectory(userID).appendingPathComponent(databaseName).path }
}

/// An app's configuration: the device's (`device`), whose settings read as its own
/// (`configuration.passwordRounds`), and the app's.
@dynamicMemberLookup
public protocol AppConfiguration: Sendable {
    var device: DeviceConfiguration { get set }
}

extension AppConfiguration {
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<DeviceConfiguration, Value>) -> Value {
        get { device[keyPath: keyPath] }
        set { device[keyPath: keyPath] = newValue }
    }

    public subscript<Value>(dynamicMember keyPath: KeyPath<DeviceConfiguration, Value>) -> Value {
        device[keyPath: keyPath]
    }

    /// The folder of a person's data.
    public func userDirectory(_ userID: String) -> URL { device.userDirectory(userID) }

    /// The path of a person's database.
    public func databasePath(_ userID: String) -> String { device.databasePath(userID) }
}
