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
    /// How long a command waits for queued work to go out before answering; the rest goes later.
    public var localCommandSyncBudget: Duration = .milliseconds(300)
    /// How long a command, started with scans or visits waiting, first waits to learn whether the
    /// server answers, and then for what waits to go out, so that it can announce the results.
    public var catchUpCheck: Duration = .milliseconds(800)
    public var catchUpBudget: Duration = .seconds(3)
    /// How long `scan` waits for the server's classification before saying it waits.
    public var scanBudget: Duration = .seconds(30)
    /// How long a read of server data (points, score, tips) waits for the network before it
    /// answers from the saved copy.
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
