import EventualAPI
import EventualKit
import Foundation
import Logging

/// Where a device keeps SustainU's data, which server it talks to, and how patient it is.
public struct RecyclingConfiguration: Sendable {
    /// Holds the saved sign-in (`secrets/`) and the signed-in user's data (`users/<id>/`).
    public var dataDirectory: URL
    public var serverURL: URL
    /// The deadline of one whole request.
    public var requestTimeout: Duration = .seconds(30)
    /// How long a request may wait to connect, and then for the server's first byte.
    public var timeouts = ServerLink.Timeouts(connect: .seconds(3), firstByte: .seconds(5))
    /// The same for a scan, whose photo the server hands to a vision model that may take 20 s.
    public var scanTimeouts = ServerLink.Timeouts(connect: .seconds(3), firstByte: .seconds(25))
    /// How long a command that answers from this device waits for the network at all: for what
    /// it queued to go out, to revalidate a saved copy, to learn whether the server answers. The
    /// rest goes later (a server that accepts connections and never answers costs this, no more).
    public var localCommandSyncBudget: Duration = .milliseconds(300)
    /// How long a command, started with scans or visits waiting, first waits to learn whether the
    /// server answers, and then for what waits to go out, so that it can announce the results.
    public var catchUpCheck: Duration = .milliseconds(300)
    public var catchUpBudget: Duration = .seconds(1)
    /// How long `scan` waits for the server's classification, once the server answered, before
    /// saying the scan waits (it is classified later; `sustainu scans` shows it).
    public var scanBudget: Duration = .seconds(10)
    /// How long a read of server data (points, score, tips) waits for the network when the device
    /// has no saved copy at all (the first load), before saying it needs a connection.
    public var refreshBudget: Duration = .seconds(3)
    /// The person's time zone: their days, streaks and reminders.
    public var timeZone: TimeZone = .current
    /// PBKDF2 rounds of the offline-sign-in verifier.
    public var passwordRounds = 210_000
    /// How long after the last online sign-in an offline one is allowed.
    public var maxOfflineAge: Duration = .seconds(7 * 24 * 3600)
    public var sync = SyncConfiguration()
    /// Usage events for the product team's questions; the person may turn them off.
    public var analyticsEnabled = true
    /// This device's clock, in Unix milliseconds (a test sets a wrong one).
    public var wallClock: @Sendable () -> Int64 = { UnixMillis.now() }
    /// What the sync engine logs (to stderr by default): a command-line app wants only the worst.
    public var engineLogLevel: Logger.Level = .critical

    public init(dataDirectory: URL, serverURL: URL) {
        self.dataDirectory = dataDirectory
        self.serverURL = serverURL
    }

    var secretsDirectory: URL { DeviceFolders(dataDirectory).secrets }

    func userDirectory(_ userID: String) -> URL { DeviceFolders(dataDirectory).user(userID) }

    func databasePath(_ userID: String) -> String { userDirectory(userID).appendingPathComponent("sustainu.sqlite").path }

    /// Where photos of scans wait until the server has classified them.
    func photosDirectory(_ userID: String) -> URL { userDirectory(userID).appendingPathComponent("scans", isDirectory: true) }
}
