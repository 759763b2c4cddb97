import EventualAPI
import EventualStorage
import Foundation
import Logging
import SQLKit
import ServiceLifecycle

/// The apps deployed to the server's database (`deployed_apps`), the one owner of that table.
/// Each deploy adds a row: an app's declaration as deployed, at a revision that grows with every
/// deploy of any app, so the server keeps every declaration it has served and a running server
/// knows a new deploy by its revision (`AppWatcher`). No HTTP request deploys: it is an
/// operator's act on the database (`eventual-server apps deploy`).
public struct DeployedApps: Sendable {
    let database: Database
    let logger: Logger

    public init(database: Database, logger: Logger = Logger(label: "eventual-server.apps")) {
        self.database = database
        self.logger = logger
    }

    /// What a deploy did.
    public enum Outcome: Sendable, Equatable {
        /// A new app, at this revision.
        case deployed(revision: Int64)
        /// A new version of an app served already, at this revision, and its steps from the version
        /// served before (`AppRedeploy.steps`).
        case redeployed(revision: Int64, from: Int, steps: [String])
        /// The same declaration as the one served: nothing was written.
        case unchanged(revision: Int64)
    }

    /// Why a declaration was not deployed: every mistake, each with its place.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public let problems: [DeclarationProblem]
        public var description: String { problems.map(\.description).joined(separator: "; ") }
    }

    /// The apps served now: each app's newest declaration. One that no longer reads (a newer
    /// server's reader, say) is left out and logged as an error, never served half.
    public func current() async throws -> [DeployedApp] {
        try await database.withConnection { sql in try await Self.current(on: sql, logger: logger) }
    }

    /// Every declaration of `id` the server has served, oldest first (one that no longer reads is
    /// left out, as `current` leaves it out).
    public func versions(of id: String) async throws -> [DeployedApp] {
        try await database.withConnection { sql in
            try await sql.raw("""
                SELECT app_id, revision, declaration, deployed_at FROM deployed_apps WHERE app_id = \(bind: id) ORDER BY revision
                """).all().compactMap { try Self.read($0, logger: logger) }
        }
    }

    /// The newest revision of any app: what a running server compares to know a deploy happened.
    public func revision() async throws -> Int64 {
        try await database.withConnection { sql in
            try await sql.raw("SELECT max(revision) AS revision FROM deployed_apps").first()?
                .decode(column: "revision", as: Int64?.self) ?? 0
        }
    }

    /// Deploys `text`, a declaration: a new app, or one served already whose new declaration only
    /// adds (`AppRedeploy`). Refused, with every mistake, when it does not read, claims a
    /// collection of another app, or changes what stored records hold.
    /// A minimum version lower than the one served is refused unless `lowersMinimum` (`AppRedeploy.minimumProblem`).
    public func deploy(_ text: String, lowersMinimum: Bool = false, now: Int64 = UnixMillis.now()) async throws -> Outcome {
        // NB: two deploys at once on PostgreSQL may read the same newest revision; the unique
        // revision refuses the second insert, which reads again and tries once more.
        var attempt = 0
        while true {
            do {
                return try await database.transaction { sql in
                    try await Self.deploy(text, lowersMinimum: lowersMinimum, now: now, on: sql, logger: logger)
                }
            } catch let refusal as Refusal {
                throw refusal
            } catch where attempt < 3 {
                attempt += 1
                try await Task.sleep(for: .milliseconds(20 * attempt))
            }
        }
    }

    /// Deploys the built-in apps (`EventualApp.builtIn`) that are not deployed yet, as a
    /// migration would, and a built-in's newer bundled declaration when it only adds to the one
    /// served. A served declaration that the bundled one would narrow is kept and logged.
    public func deployBuiltIns(now: Int64 = UnixMillis.now()) async throws {
        let served = Dictionary(try await current().map { ($0.app.id.rawValue, $0) }) { first, _ in first }
        for app in EventualApp.builtIn {
            let id = app.id.rawValue
            if let deployed = served[id], deployed.app == app { continue }
            if let deployed = served[id],
               AppRedeploy.versionProblem(from: deployed.app, to: app) != nil || !AppRedeploy.problems(from: deployed.app, to: app).isEmpty {
                logger.warning("a built-in app is served as deployed: its bundled declaration would narrow it",
                               metadata: ["app": "\(id)", "revision": "\(deployed.revision)"])
                continue
            }
            let outcome = try await deploy(BuiltInApps.text(of: id), now: now)
            logger.notice("deployed a built-in app", metadata: ["app": "\(id)", "outcome": "\(outcome)"])
        }
    }

    // MARK: - On a connection

    private static func deploy(_ text: String, lowersMinimum: Bool, now: Int64, on sql: any SQLDatabase, logger: Logger) async throws
        -> Outcome {
        let served = try await current(on: sql, logger: logger)
        let app: EventualApp
        switch AppDeclaration.read(text, owners: AppCatalog.Snapshot(served).owners) {
        case .success(let declaration): app = declaration.app
        case .failure(let problems): throw Refusal(problems: problems.problems)
        }
        let previous = served.first { $0.app.id == app.id }
        if let previous {
            if previous.declaration == text || previous.app == app { return .unchanged(revision: previous.revision) }
            let problems = [AppRedeploy.versionProblem(from: previous.app, to: app),
                            AppRedeploy.minimumProblem(from: previous.app, to: app, lowering: lowersMinimum)].compactMap { $0 }
                + AppRedeploy.problems(from: previous.app, to: app)
            guard problems.isEmpty else { throw Refusal(problems: problems) }
        }
        let newest = try await sql.raw("SELECT max(revision) AS revision FROM deployed_apps").first()?
            .decode(column: "revision", as: Int64?.self) ?? 0
        let revision = newest + 1
        try await sql.insert(into: "deployed_apps").columns("app_id", "revision", "declaration", "deployed_at")
            .values(SQLBind(app.id.rawValue), SQLBind(revision), SQLBind(text), SQLBind(now)).run()
        guard let previous else { return .deployed(revision: revision) }
        return .redeployed(revision: revision, from: previous.app.version, steps: AppRedeploy.steps(from: previous.app, to: app))
    }

    static func current(on sql: any SQLDatabase, logger: Logger) async throws -> [DeployedApp] {
        try await sql.raw("""
            SELECT d.app_id, d.revision, d.declaration, d.deployed_at FROM deployed_apps d
            WHERE d.revision = (SELECT max(n.revision) FROM deployed_apps n WHERE n.app_id = d.app_id)
            ORDER BY d.app_id
            """).all().compactMap { try read($0, logger: logger) }
    }

    private static func read(_ row: any SQLRow, logger: Logger) throws -> DeployedApp? {
        let id = try row.decode(column: "app_id", as: String.self), text = try row.decode(column: "declaration", as: String.self)
        let revision = try row.decode(column: "revision", as: Int64.self)
        switch AppDeclaration.read(text) {
        case .success(let declaration) where declaration.app.id.rawValue == id:
            return DeployedApp(app: declaration.app, declaration: text, revision: revision,
                               deployedAt: try row.decode(column: "deployed_at", as: Int64.self))
        case .success:
            logger.error("a deployed declaration names another app: not served", metadata: ["app": "\(id)", "revision": "\(revision)"])
            return nil
        case .failure(let problems):
            logger.error("a deployed declaration does not read: not served",
                         metadata: ["app": "\(id)", "revision": "\(revision)", "problems": "\(problems)"])
            return nil
        }
    }
}

/// Keeps a running server's `AppCatalog` as deployed: reads the newest revision every
/// `interval` (one indexed read) and, when it moved, the apps, so that a deploy by another
/// process on the database (`eventual-server apps deploy`) is served within a second or two.
struct AppWatcher: Service {
    let apps: DeployedApps
    let catalog: AppCatalog
    let logger: Logger
    var interval: Duration = .seconds(1)

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            } catch {
                return
            }
            do {
                try await refresh()
            } catch {
                logger.warning("reading the deployed apps failed; will retry", metadata: ["error": "\(LogSafe.describe(error))"])
            }
        }
    }

    /// Takes up what was deployed since the catalog was read, if anything.
    func refresh() async throws {
        guard try await apps.revision() != catalog.snapshot.revision else { return }
        let fresh = try await apps.current()
        let before = Set(catalog.snapshot.apps.map { "\($0.app.id.rawValue)@\($0.revision)" })
        catalog.replace(with: fresh)
        for deployed in fresh where !before.contains("\(deployed.app.id.rawValue)@\(deployed.revision)") {
            logger.notice("serving a deployed app", metadata: ["app": "\(deployed.app.id.rawValue)", "revision": "\(deployed.revision)"])
        }
    }
}
