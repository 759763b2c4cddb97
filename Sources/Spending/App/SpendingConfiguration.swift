import EventualAPI
import EventualKit
import Foundation
import Logging

/// Where a device keeps its data, which server it talks to, how patient it is, and its clock.
public struct SpendingConfiguration: Sendable {
    /// Holds the saved sign-in (`secrets/`) and the signed-in user's database (`users/<id>/`).
    public var dataDirectory: URL
    public var serverURL: URL
    /// The deadline of one whole request.
    public var requestTimeout: Duration = .seconds(30)
    /// How long a request may wait to connect, and then for the server's first byte.
    public var timeouts = ServerLink.Timeouts(connect: .seconds(3), firstByte: .seconds(5))
    /// How long a command that changes local data waits for the sync that follows it.
    public var localCommandSyncBudget: Duration = .milliseconds(300)
    /// How long reading offers or insights waits for the server before showing the saved copy.
    public var networkReadTimeout: Duration = .seconds(4)
    /// Offers younger than this are shown without asking the server (seed 003: 10 minutes).
    public var offersMaxAge: Duration = .seconds(10 * 60)
    /// PBKDF2 rounds of the offline-sign-in verifier.
    public var passwordRounds = 210_000
    /// How long after the last online sign-in an offline one is allowed, and after which the
    /// device's data is wiped at the next start (seed 002, F5).
    public var maxOfflineAge: Duration = .seconds(7 * 24 * 3600)
    /// Unix milliseconds now: injectable, so tests can live through a week in a moment.
    public var clock: @Sendable () -> Int64 = { UnixMillis.now() }
    /// The person's time zone: days, weeks and months of the dashboard and limits, "offers from 14:02".
    public var timeZone: TimeZone = .current
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
    /// The email of a registration whose code has not been typed yet.
    var pendingVerificationFile: URL { dataDirectory.appendingPathComponent("pending-verification") }

    func userDirectory(_ userID: String) -> URL { DeviceFolders(dataDirectory).user(userID) }

    func databasePath(_ userID: String) -> String { userDirectory(userID).appendingPathComponent("spending.sqlite").path }

    var calendar: Calendar {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = timeZone
        return calendar
    }
}
