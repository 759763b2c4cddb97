import EventualKit
import Foundation
import Logging

/// Where a device keeps its data, which server it talks to, and how patient it is.
public struct PantryConfiguration: Sendable {
    /// Holds the saved sign-in (`secrets/`) and the signed-in user's database (`users/<id>/`).
    public var dataDirectory: URL
    public var serverURL: URL
    /// The deadline of one whole request.
    public var requestTimeout: Duration = .seconds(30)
    /// How long a request may wait to connect, and then for the server's first byte.
    public var timeouts = ServerLink.Timeouts(connect: .seconds(3), firstByte: .seconds(5))
    /// How long a command that changes or reads local data waits for the sync that follows it
    /// before answering; the engine sends the rest later.
    public var localCommandSyncBudget: Duration = .milliseconds(300)
    /// How a barcode look-up uses the network and the saved copy.
    public var lookupPolicy: CachePolicy = .networkFirst(timeout: .seconds(4))
    /// PBKDF2 rounds of the offline-sign-in verifier.
    public var passwordRounds = 210_000
    /// How long after the last online sign-in an offline one is allowed.
    public var maxOfflineAge: Duration = .seconds(7 * 24 * 3600)
    public var sync = SyncConfiguration()
    /// Whether usage events are recorded and sent (`--no-analytics` turns it off).
    public var analyticsEnabled = true
    /// What the sync engine logs (to stderr by default): a command-line app wants only the worst.
    public var engineLogLevel: Logger.Level = .critical

    public init(dataDirectory: URL, serverURL: URL) {
        self.dataDirectory = dataDirectory
        self.serverURL = serverURL
    }

    var secretsDirectory: URL { DeviceFolders(dataDirectory).secrets }

    func userDirectory(_ userID: String) -> URL { DeviceFolders(dataDirectory).user(userID) }

    func databasePath(_ userID: String) -> String { userDirectory(userID).appendingPathComponent("pantry.sqlite").path }
}
