/// An app built on the platform, registered once here: what every layer below an app needs to
/// know of it. The server reads it to accept the app's records (`SyncCollections.all`), to word
/// a verification mail and to title the app's dashboard page; events and spaces carry its `id`.
///
/// A new app declares its `AnalyticsApp` id and its `EventualApp` in its own file beside its
/// collections (`Collections/<App>.swift`), and adds itself to `all`: nothing else below it changes.
public struct EventualApp: Sendable, Equatable {
    /// Its name as the wire, its events and its spaces spell it (`pantry`).
    public let id: AnalyticsApp
    /// Its name as a person reads it ("Tracking My Pantry").
    public let title: String
    /// Its synced collections; none when its data is the server's answers to its calls.
    public let collections: [SyncCollection]
    /// Whether it needs a verified email: a registration from it is mailed a code at once.
    public let needsVerifiedEmail: Bool
    /// The command that takes a mailed code, when the app has one (`spendiq verify`).
    public let verifyCommand: String?

    public init(id: AnalyticsApp, title: String, collections: [SyncCollection] = [], needsVerifiedEmail: Bool = false,
                verifyCommand: String? = nil) {
        self.id = id
        self.title = title
        self.collections = collections
        self.needsVerifiedEmail = needsVerifiedEmail
        self.verifyCommand = verifyCommand
    }

    /// Every registered app, in the order the dashboard lists them.
    public static let all: [EventualApp] = [.sustainU, .spendiQ, .pantry, .chores]

    /// The registered app `id` names, if any.
    public static func named(_ id: AnalyticsApp) -> EventualApp? {
        all.first { $0.id == id }
    }
}

/// An app's name as events, registrations and spaces carry it: one of the registered apps'
/// (`EventualApp.all`). Each app declares its own beside its collections.
public struct AnalyticsApp: RawRepresentable, Sendable, Hashable, CaseIterable {
    public let rawValue: String

    /// A registered app's name; nil for any other.
    public init?(rawValue: String) {
        guard EventualApp.all.contains(where: { $0.id.rawValue == rawValue }) else { return nil }
        self.rawValue = rawValue
    }

    /// Declares an app's name (in its own file, beside its `EventualApp`).
    public init(declaring name: String) {
        rawValue = name
    }

    public static var allCases: [AnalyticsApp] { EventualApp.all.map(\.id) }
}
