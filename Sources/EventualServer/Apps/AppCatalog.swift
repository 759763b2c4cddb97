import EventualAPI
import Synchronization

/// An app as this server serves it: its declaration as deployed (`DeployedApps`), read.
public struct DeployedApp: Sendable, Equatable {
    public let app: EventualApp
    /// The declaration's text as deployed (YAML or JSON).
    public let declaration: String
    /// Grows with every deploy on this database, of any app.
    public let revision: Int64
    /// Unix milliseconds.
    public let deployedAt: Int64
}

/// The apps this server serves, as deployed to its database, read by every part that needs an
/// app (push validation and merges, spaces, registrations and mails, the dashboard). It is
/// refreshed from the database while the server runs (`AppWatcher`), so a deploy is taken up
/// within a second or two by every server process on the database, without a restart.
///
/// NB: one lock-protected value, swapped whole: a push reads one catalog from its start to its
/// end, never half of an old deploy and half of a new one.
public final class AppCatalog: Sendable {
    /// One deploy state: the apps and their collections by name.
    public struct Snapshot: Sendable {
        /// Built-in apps first, in the dashboard's order, then the others by id.
        public let apps: [DeployedApp]
        /// The newest revision of any app; 0 with none deployed.
        public let revision: Int64
        /// Every served collection, by name.
        public let collections: [String: SyncCollection]
        private let byID: [String: DeployedApp]

        init(_ apps: [DeployedApp]) {
            let order = Dictionary(uniqueKeysWithValues: EventualApp.builtIn.enumerated().map { ($1.id.rawValue, $0) })
            self.apps = apps.sorted { (order[$0.app.id.rawValue] ?? .max, $0.app.id.rawValue) < (order[$1.app.id.rawValue] ?? .max, $1.app.id.rawValue) }
            revision = apps.map(\.revision).max() ?? 0
            byID = Dictionary(apps.map { ($0.app.id.rawValue, $0) }) { first, _ in first }
            collections = Dictionary(apps.flatMap(\.app.collections).map { ($0.name, $0) }) { first, _ in first }
        }

        /// The served app called `id`, if any.
        public func app(_ id: String) -> DeployedApp? { byID[id] }

        /// Which app owns each served collection, by collection name.
        public var owners: [String: String] {
            collections.mapValues(\.app.rawValue)
        }
    }

    private let current: Mutex<Snapshot>

    /// A catalog of `apps`, until it is refreshed.
    public init(_ apps: [DeployedApp]) {
        current = Mutex(Snapshot(apps))
    }

    /// The built-in apps alone, as if deployed at revision 0: for tools and tests that open no catalog.
    public static let builtIn: AppCatalog = {
        AppCatalog(EventualApp.builtIn.map { DeployedApp(app: $0, declaration: BuiltInApps.text(of: $0.id.rawValue), revision: 0, deployedAt: 0) })
    }()

    /// The apps as deployed now.
    public var snapshot: Snapshot { current.withLock { $0 } }

    /// Every served collection, by name.
    public var collections: [String: SyncCollection] { snapshot.collections }

    /// Takes up a new deploy state.
    func replace(with apps: [DeployedApp]) {
        let fresh = Snapshot(apps)
        current.withLock { $0 = fresh }
    }
}
