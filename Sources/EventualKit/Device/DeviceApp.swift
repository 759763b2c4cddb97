import EventualAPI
import Foundation

/// What an app is to the device layer: its name for the server and its usage events, its
/// tables, how it words its outbox, and its account rules.
public struct DeviceApp: Sendable {
    /// The app as the platform registers it (`EventualApp`): its name, title and collections.
    public let registration: EventualApp
    /// The app that registers an account (the server mails a code only to those that need one).
    public var name: String { registration.id.rawValue }
    /// The app's name as its usage events carry it.
    public var analyticsName: AnalyticsApp { registration.id }
    public let version: String
    /// The app's tables, after the engine's.
    public let migrations: [LocalMigration]
    /// The app's words for an outbox entry ("item Milk"), read from its tables in the person's store.
    public let summary: @Sendable (OutboxEntry, LocalStore) throws -> String
    /// The app's name for a record of one of its collections ("item Jam", "expense EUR 9.00 on
    /// Home"), read from its tables; nil when it has none to give.
    public let recordName: @Sendable (_ collection: String, _ id: String, LocalStore) throws -> String?
    /// Whether an entry is the person's own work: only those hold a sign-out or another person's
    /// sign-in back (SpendiQ's "last seen" is not).
    public let isPersonsWork: @Sendable (OutboxEntry) -> Bool
    public let policy: AccountPolicy
    /// What the app calls a space shared with others, in what it says ("household").
    public let spaceNoun: String

    public init(_ registration: EventualApp, version: String, migrations: [LocalMigration],
                policy: AccountPolicy = AccountPolicy(), spaceNoun: String = "space", isPersonsWork: @escaping @Sendable (OutboxEntry) -> Bool = { _ in true },
                recordName: @escaping @Sendable (_ collection: String, _ id: String, LocalStore) throws -> String? = { _, _, _ in nil },
                summary: @escaping @Sendable (OutboxEntry, LocalStore) throws -> String) {
        self.registration = registration
        self.version = version
        self.migrations = migrations
        self.policy = policy
        self.spaceNoun = spaceNoun
        self.isPersonsWork = isPersonsWork
        self.recordName = recordName
        self.summary = summary
    }
}
