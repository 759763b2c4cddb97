import ArgumentParser
import EventualAPI
import EventualKit
import Foundation

/// An app's command as the command kit sees it: the root command (`pantry`), the app it opens
/// (`AppHost<User>`), its words, and the few hooks where the apps differ. The kit writes once the
/// subcommands every app has, the account's (`register`, `verify`, `login`, `logout`, `whoami`)
/// and the outbox's (`status`, `sync`, `failures`, `settle`, `retry`, `discard`); an app's
/// command lists them around its own features:
///
///     subcommands: accountCommands + [Scan.self, List.self] + outboxCommands
///
/// Every hook has a default that fits an app whose records sync; an app overrides only where it
/// says or does more (pantry's `settle --quantity`, SustainU's catalogues after a sync).
public protocol AppCommand: AsyncParsableCommand {
    /// The app's signed-in person.
    associatedtype User: AppUser
    /// `settle`'s options beyond `--keep-mine`, `--take-theirs` and `--discard` (pantry's
    /// `--quantity` and `--personal`); `NoOptions` for none.
    associatedtype SettleOptions: ParsableArguments = NoOptions
    /// What `status --json` adds to the keys every app prints (SustainU's saved catalogues);
    /// `NoOptions` (which encodes nothing) for nothing.
    associatedtype StatusDetails: Encodable = NoOptions

    /// What the app calls what waits, its name on the command line, and its settle choices.
    static var words: DeviceWords { get }

    /// The app on this device; `creating: false` for a command that only reads (a missing data
    /// folder stays missing).
    static func app(_ options: SharedOptions<Self>, creating: Bool) throws -> AppHost<User>
    /// The signed-in person, opened for one of the kit's commands; `network: false` for one that
    /// reads only this device (`failures`).
    static func open(_ options: SharedOptions<Self>, network: Bool) async throws -> User

    // MARK: Account

    /// Said after a registration: what to do next.
    static func registered(_ account: DeviceAccount) -> String
    /// Said after the email is confirmed.
    static func verified(_ address: String?) -> String
    /// What the first sync's bar says once it is done ("the last 30 days are in").
    static var firstSyncReadyNote: String? { get }
    /// What a sign-in adds to "Signed in as alice." (what it fetched, what it saved for offline use).
    static func signedInNote(_ signIn: AppSignIn<User>) -> String?
    /// After a sign-in and its note (SustainU tells of scans classified meanwhile).
    static func signedIn(_ user: User) async

    // MARK: Spaces

    /// Where the invitations live on the command line: "pantry household", "spendiq".
    static var spaceCommand: String { get }
    /// What a joined space brings: "its items are on this device (pantry list)".
    static var joined: String { get }

    // MARK: Outbox

    /// What `status` says besides what every app says (nil for nothing).
    static func statusDetails(_ user: User, _ status: DeviceStatus) async throws -> StatusDetails?
    /// The status as text; by default the device's report and what to do when it must sign in again.
    static func statusText(_ user: User, _ status: DeviceStatus, _ details: StatusDetails?) async -> String
    /// The device's status (SustainU probes with its own budget).
    static func status(_ user: User) async throws -> DeviceStatus
    /// A sync as `sync` runs it (SustainU refreshes its catalogues after), with a bar's `progress`.
    static func sync(_ user: User, progress: @escaping @Sendable (Int, Int) -> Void) async throws -> SyncReport
    /// What went and came in a round, in the app's words: "sent 2 change(s), fetched 3".
    static func sent(_ report: SyncReport) -> String
    /// What `sync` prints, or the error it ends with; by default `words.synced` over `sent`.
    static func said(_ report: SyncReport, _ user: User) async throws -> String
    /// A refused change in words: "use of 1 of Yoghurt".
    static func summary(of change: FailedChange, _ user: User) -> String
    /// What `failures` adds to "Settle each: …" for the options of its own (pantry's `--quantity`).
    static var settleHint: String { get }
    /// The choice a `settle` makes from the flag given and the app's options (pantry's
    /// `--quantity` with `--keep-mine`); with no `user`, only checks the options go with the flag.
    static func settleChoice(_ options: SettleOptions, _ flag: SettleFlag, id: String, _ user: User?) throws -> SettleChoice
    /// Settles a refused change (Spending takes a transfer's other side along).
    static func settle(_ user: User, _ id: String, _ choice: SettleChoice) async throws -> Settlement
    /// What a record is now, after a settle: " (2 left)"; empty for nothing to add.
    static func settledNow(_ settlement: Settlement, _ user: User) -> String
    /// Sends a refused entry again (SustainU waits for a scan's classification).
    static func retry(_ user: User, _ id: String) async throws -> (line: OutboxLine, outcome: RetryOutcome)
    /// Drops a refused entry (SustainU drops the scan and its photo with it).
    static func discard(_ user: User, _ id: String) async throws -> OutboxLine
}

/// The choice of `settle`'s flags.
public enum SettleFlag: Sendable, Equatable {
    case keepMine, takeTheirs, discard, personal

    /// The engine's choice for the flag alone.
    public var choice: SettleChoice {
        switch self {
        case .keepMine: .keepMine()
        case .takeTheirs: .takeTheirs
        case .discard: .discard
        case .personal: .keepAsOwn()
        }
    }
}

/// No options, or nothing to add to a JSON object.
public struct NoOptions: ParsableArguments, Encodable {
    public init() {}
    public func encode(to encoder: any Encoder) throws {}
}

extension AppCommand {
    /// The account's subcommands, written once for every app.
    public static var accountCommands: [any ParsableCommand.Type] {
        [Register<Self>.self, Verify<Self>.self, Login<Self>.self, Logout<Self>.self, Whoami<Self>.self]
    }

    /// The invitations' subcommands, written once for every app with spaces.
    public static var invitationCommands: [any ParsableCommand.Type] {
        [Invitations<Self>.self, Accept<Self>.self, Decline<Self>.self]
    }

    public static var spaceCommand: String { words.command }

    public static var joined: String { "its records arrive with the next sync" }

    /// The outbox's subcommands, written once for every app.
    public static var outboxCommands: [any ParsableCommand.Type] {
        [Status<Self>.self, Sync<Self>.self, Failures<Self>.self, Settle<Self>.self, Retry<Self>.self, Discard<Self>.self]
    }

    public static func open(_ options: SharedOptions<Self>, network: Bool) async throws -> User {
        try await app(options, creating: true).open()
    }

    public static func registered(_ account: DeviceAccount) -> String {
        let name = words.command
        return User.deviceApp.registration.needsVerifiedEmail
            ? "Registered \(account.username) <\(account.email)>. We mailed you a code: \(name) verify CODE"
            : "Registered \(account.username) <\(account.email)>. Now: \(name) login --email \(account.email)"
    }

    public static func verified(_ address: String?) -> String {
        User.deviceApp.registration.needsVerifiedEmail
            ? "Email confirmed. Now: \(words.command) login --email \(address ?? "EMAIL")"
            : "Email confirmed."
    }

    public static var firstSyncReadyNote: String? { nil }

    public static func signedInNote(_ signIn: AppSignIn<User>) -> String? {
        signIn.pulled > 0 ? "Fetched \(signIn.pulled) record(s): your other devices' and what is shared with you." : nil
    }

    public static func signedIn(_ user: User) async {}

    public static func statusDetails(_ user: User, _ status: DeviceStatus) async throws -> StatusDetails? { nil }

    public static func statusText(_ user: User, _ status: DeviceStatus, _ details: StatusDetails?) async -> String {
        [words.report(status), words.signInAgain(user.device)].compactMap { $0 }.joined(separator: "\n")
    }

    public static func status(_ user: User) async throws -> DeviceStatus { try await user.device.status() }

    public static func sync(_ user: User, progress: @escaping @Sendable (Int, Int) -> Void) async throws -> SyncReport {
        await user.device.sync { remaining, total in progress(total - remaining, total) }
    }

    public static func sent(_ report: SyncReport) -> String {
        "sent \(report.sent - report.duplicates) change(s) and \(report.calls - report.upkeepCalls) other update(s), fetched \(report.pulled)"
    }

    public static func said(_ report: SyncReport, _ user: User) async throws -> String {
        try words.synced(report, done: sent(report), outbox: user.device.outbox)
    }

    public static var settleHint: String { "" }

    public static func settleChoice(_ options: SettleOptions, _ flag: SettleFlag, id: String, _ user: User?) throws -> SettleChoice {
        flag.choice
    }

    public static func settle(_ user: User, _ id: String, _ choice: SettleChoice) async throws -> Settlement {
        try await user.device.settle(id, choice)
    }

    public static func settledNow(_ settlement: Settlement, _ user: User) -> String { "" }

    public static func retry(_ user: User, _ id: String) async throws -> (line: OutboxLine, outcome: RetryOutcome) {
        try await user.device.retry(id)
    }

    public static func discard(_ user: User, _ id: String) async throws -> OutboxLine {
        try await user.device.discard(id)
    }
}
