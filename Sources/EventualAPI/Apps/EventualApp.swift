import Foundation

/// An app built on the platform, as its declaration file says it (`AppDeclaration`): what every
/// layer below an app needs to know of it. The server serves the apps deployed to its database
/// (`eventual-server apps deploy`): it accepts their records, words their verification mails and
/// titles their dashboard pages; events and spaces carry its `id`. An app on a device hands its
/// own declaration, bundled with it, to the engine (`EventualApp.declared(at:)`).
///
/// The apps built into this repository (`builtIn`) are declared in `Declarations/`; the server
/// deploys them at its first start. An app outside it (Examples/Chores) edits nothing here.
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
    /// Its version, from 1: each deploy of a new declaration raises it, and a new version may only
    /// add to the one before (`AppRedeploy`), so that devices of every version sync side by side.
    public let version: Int
    /// The oldest version the server still syncs, from 1 to `version`: a device of an earlier one
    /// is told to update the app (`upgrade_required`) for this app's collections, and keeps what it
    /// has to send. The operator raises it when the versions below can no longer be served.
    public let minimumVersion: Int

    public init(id: AnalyticsApp, title: String, collections: [SyncCollection] = [], needsVerifiedEmail: Bool = false,
                verifyCommand: String? = nil, version: Int = 1, minimumVersion: Int = 1) {
        self.id = id
        self.version = version
        self.minimumVersion = minimumVersion
        self.title = title
        self.collections = collections
        self.needsVerifiedEmail = needsVerifiedEmail
        self.verifyCommand = verifyCommand
    }

    /// The app as it is, with `other`'s minimum version: what a redeploy that changes only the minimum compares.
    public func keepingMinimum(of other: EventualApp) -> EventualApp {
        EventualApp(id: id, title: title, collections: collections, needsVerifiedEmail: needsVerifiedEmail, verifyCommand: verifyCommand,
                    version: version, minimumVersion: other.minimumVersion)
    }

    /// The apps built into this repository, in the order the dashboard lists them; the server
    /// deploys them at its first start.
    public static let builtIn: [EventualApp] = [.sustainU, .spendiQ, .pantry]

    /// The built-in app `id` names, if any.
    public static func named(_ id: AnalyticsApp) -> EventualApp? {
        builtIn.first { $0.id == id }
    }

    /// The app its declaration file at `url` declares (YAML or JSON): how an app outside this
    /// repository hands the engine its collections. Throws every mistake of the file.
    public static func declared(at url: URL) throws -> EventualApp {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw DeclarationProblems([DeclarationProblem(line: nil, place: url.lastPathComponent, message: "cannot be read as UTF-8 text")])
        }
        return try AppDeclaration.read(text).get().app
    }

    /// Its collection called `name`, which its declaration has.
    /// NB: for an app's own code, naming its own collection: one it does not declare is a broken build.
    public func collection(_ name: String) -> SyncCollection {
        guard let collection = collections.first(where: { $0.name == name }) else {
            preconditionFailure("the app \(id.rawValue) declares no collection \(name)")
        }
        return collection
    }
}

/// An app's name as events, registrations and spaces carry it (`pantry`, `chores`).
public struct AnalyticsApp: RawRepresentable, Sendable, Hashable, CaseIterable {
    public let rawValue: String

    /// A built-in app's name; nil for any other (a deployed app's is `init(declaring:)`).
    public init?(rawValue: String) {
        guard EventualApp.builtIn.contains(where: { $0.id.rawValue == rawValue }) else { return nil }
        self.rawValue = rawValue
    }

    /// An app's name as its declaration gives it.
    public init(declaring name: String) {
        rawValue = name
    }

    /// The built-in apps' names.
    public static var allCases: [AnalyticsApp] { EventualApp.builtIn.map(\.id) }
}
