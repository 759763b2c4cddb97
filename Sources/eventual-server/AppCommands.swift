import ArgumentParser
import EventualAPI
import EventualServer
import Foundation

/// `eventual-server apps`: an app's declaration checked, deployed to the server's database, listed
/// or shown, or a built-in app's written out.
struct AppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Check, deploy, list and show apps' declarations (docs/app-declaration.schema.json).",
        discussion: """
            An app is a declaration file: its version, collections, fields and rules. Deployed to the server's database, \
            it is served by every server process on that database within a second or two, without a restart. A new \
            declaration of an app is a new version (a higher `version:`), which may only add to the one served: a \
            collection, a field that is nullable or has a default, a deprecation, a looser field or rule. The server \
            keeps every version it served (apps show ID --version N). `minimumVersion:` (1 to the version) is the oldest \
            version synced: devices below it are told to update the app; the same version may be deployed again with \
            only it raised (lowering it takes apps deploy --lower-minimum).
            """,
        subcommands: [Check.self, Deploy.self, List.self, Show.self, Export.self]
    )

    /// `apps check FILE...`: every mistake of each file, a line each, with its line and place.
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Check app declaration files: every mistake in one line with its place, exit 1 if any.",
            discussion: "Example: eventual-server apps check chores.app.yaml")

        @Argument(help: "The declaration files (YAML or JSON).") var files: [String]
        @Option(help: ArgumentHelp("Also check against the apps deployed to this database (an SQLite file or a postgres:// URL):"
            + " their collections, and the version served of the same app.", valueName: "database")) var against: String?
        @Flag(help: "Take a lower minimumVersion than the one served as apps deploy --lower-minimum would.") var lowerMinimum = false

        func validate() throws {
            if files.isEmpty { throw ValidationError("Give a declaration file to check") }
        }

        func run() async throws {
            // NB: the built-in apps own their collections: a file may not claim one of another app's.
            var owners = AppCatalog.builtIn.snapshot.owners
            var served: [String: EventualApp] = [:]
            if let against {
                if !against.hasPrefix("postgres"), !FileManager.default.fileExists(atPath: against) {
                    throw ImportFailure(message: "no database at \(visible(against)): give the server's (--against PATH or postgres://...)")
                }
                var option = DatabaseOption()
                option.database = against
                let apps = try await withDatabase(option) { database in
                    try await DeployedApps(database: database, logger: quietLogger).current()
                }
                owners = AppCatalog(apps).snapshot.owners
                served = Dictionary(apps.map { ($0.app.id.rawValue, $0.app) }) { first, _ in first }
            }
            var failed = false
            for file in files {
                let text: String
                do {
                    text = try readDeclaration(file)
                } catch let failure as ImportFailure {
                    print("\(file): \(failure.message)")
                    failed = true
                    continue
                }
                switch AppDeclaration.read(text, owners: owners) {
                case .success(let declaration):
                    let app = declaration.app
                    if let previous = served[app.id.rawValue], previous != app {
                        let problems = [AppRedeploy.versionProblem(from: previous, to: app),
                                        AppRedeploy.minimumProblem(from: previous, to: app, lowering: lowerMinimum)].compactMap { $0 }
                            + AppRedeploy.problems(from: previous, to: app)
                        if !problems.isEmpty {
                            failed = true
                            for problem in problems { print(said(problem, in: file)) }
                            continue
                        }
                        print(previous.version == app.version
                            ? "\(file): version \(app.version) of \(app.id.rawValue) (\(app.title)) again, with another minimum version: no mistake"
                            : "\(file): version \(app.version) of \(app.id.rawValue) (\(app.title)) follows version \(previous.version) served: no mistake")
                        for step in AppRedeploy.steps(from: previous, to: app) { print("  \(app.id.rawValue) \(step)") }
                        continue
                    }
                    let fields = app.collections.reduce(0) { $0 + $1.fields.count }
                    print("\(file): app \(app.id.rawValue) (\(app.title)): \(app.collections.count) collection(s), \(fields) field(s): no mistake")
                case .failure(let problems):
                    failed = true
                    for problem in problems.problems { print(said(problem, in: file)) }
                }
            }
            if failed { throw ExitCode.failure }
        }
    }

    /// `apps export ID`: a built-in app's declaration, as a file would hold it.
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Print a built-in app's declaration (pantry, spendiq, sustainu) as YAML.",
            discussion: "Example: eventual-server apps export pantry > pantry.app.yaml")

        @Argument(help: "The app's id.") var id: String

        func run() async throws {
            guard let app = EventualApp.builtIn.first(where: { $0.id.rawValue == id }) else {
                throw ValidationError("No built-in app is called \(visible(id)): use \(EventualApp.builtIn.map(\.id.rawValue).joined(separator: ", "))"
                    + " (a deployed app: apps show ID)")
            }
            print(AppDeclaration.yaml(of: app), terminator: "")
        }
    }

    /// `apps deploy FILE...`: each file deployed to the server's database, in order.
    struct Deploy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "deploy",
            abstract: "Deploy app declaration files to the server's database: served within a second or two, no restart.",
            discussion: """
                Each file is checked first (as apps check does) and against the apps deployed: a collection of another app, \
                or a redeploy that removes or narrows what stored records hold, is refused with every mistake. The built-in \
                apps are deployed first if the database has none yet. Example: eventual-server apps deploy chores.app.yaml
                """)

        @Argument(help: "The declaration files (YAML or JSON).") var files: [String]
        @Flag(help: "Let a declaration lower its app's minimumVersion (devices of the versions below sync again).")
        var lowerMinimum = false
        @OptionGroup var database: DatabaseOption

        func validate() throws {
            if files.isEmpty { throw ValidationError("Give a declaration file to deploy") }
        }

        func run() async throws {
            var texts: [(file: String, text: String)] = []
            for file in files {
                do {
                    texts.append((file, try readDeclaration(file)))
                } catch let failure as ImportFailure {
                    throw ImportFailure(message: "\(file): \(failure.message)")
                }
            }
            let (lines, refused): ([String], Bool) = try await withDatabase(database) { database in
                let apps = DeployedApps(database: database, logger: quietLogger)
                try await apps.deployBuiltIns()
                var lines: [String] = []
                for (file, text) in texts {
                    do {
                        let outcome = try await apps.deploy(text, lowersMinimum: lowerMinimum)
                        let app = try AppDeclaration.read(text).get().app
                        switch outcome {
                        case .deployed(let revision):
                            let version = app.version == 1 ? "" : "version \(app.version) of "
                            let minimum = app.minimumVersion == 1 ? "" : " (devices from version \(app.minimumVersion) sync)"
                            lines.append("\(file): deployed \(version)\(app.id.rawValue) (\(app.title))\(minimum) at revision \(revision):"
                                + " running servers serve it within a second or two.")
                        case .redeployed(let revision, let from, let steps):
                            let after = from == app.version ? "again, with another minimum version" : "from version \(from)"
                            lines.append("\(file): deployed version \(app.version) of \(app.id.rawValue) (\(app.title)) at revision"
                                + " \(revision), \(after): running servers serve it within a second or two.")
                            lines.append(contentsOf: steps.map { "  \(app.id.rawValue) \($0)" })
                        case .unchanged(let revision):
                            lines.append("\(file): \(app.id.rawValue) is served as this file declares it already (revision \(revision)): nothing changed.")
                        }
                    } catch let refusal as DeployedApps.Refusal {
                        // NB: the files after a refused one are not deployed: a set of apps goes in the order given.
                        lines.append(contentsOf: refusal.problems.map { said($0, in: file) })
                        lines.append("\(file): not deployed" + (texts.last?.file == file ? "" : "; nor the files after it"))
                        return (lines, true)
                    }
                }
                return (lines, false)
            }
            lines.forEach { print($0) }
            if refused { throw ExitCode.failure }
        }
    }

    /// `apps list`: the apps the database serves.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the apps the server's database serves.")
        @OptionGroup var database: DatabaseOption
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let apps = try await withDatabase(database) { database in
                let apps = DeployedApps(database: database, logger: quietLogger)
                try await apps.deployBuiltIns()
                return AppCatalog(try await apps.current()).snapshot.apps
            }
            if json {
                let rows: [[String: Any]] = apps.map { deployed in
                    ["id": deployed.app.id.rawValue, "title": deployed.app.title, "version": deployed.app.version,
                     "minimumVersion": deployed.app.minimumVersion, "revision": deployed.revision,
                     "deployedAt": deployed.deployedAt, "collections": deployed.app.collections.map(\.name)]
                }
                let data = try JSONSerialization.data(withJSONObject: ["apps": rows], options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
                return
            }
            for deployed in apps {
                let collections = deployed.app.collections.map(\.name).joined(separator: ", ")
                let minimum = deployed.app.minimumVersion > 1 ? " (minimum version \(deployed.app.minimumVersion))" : ""
                print("\(deployed.app.id.rawValue) (\(deployed.app.title)), version \(deployed.app.version)\(minimum), revision \(deployed.revision): "
                    + (collections.isEmpty ? "no collections" : collections))
            }
        }
    }

    /// `apps show ID`: an app's declaration as the database serves it.
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Print an app's declaration as the server's database serves it, or an earlier version.",
            discussion: "Example: eventual-server apps show chores > chores.app.yaml; apps show chores --version 1")
        @Argument(help: "The app's id.") var id: String
        @Option(help: "A version the server served (default: the one it serves now).") var version: Int?
        @OptionGroup var database: DatabaseOption

        func validate() throws {
            if let version, !(1...AppDeclaration.Limits.version).contains(version) {
                throw ValidationError("--version is a version of the app, from 1 to \(AppDeclaration.Limits.version), not \(version)")
            }
        }

        func run() async throws {
            let id = self.id
            let found: (DeployedApp?, [String], [Int]) = try await withDatabase(database) { database in
                let apps = DeployedApps(database: database, logger: quietLogger)
                try await apps.deployBuiltIns()
                let current = try await apps.current()
                let versions = try await apps.versions(of: id)
                let chosen = version.map { wanted in versions.last { $0.app.version == wanted } } ?? current.first { $0.app.id.rawValue == id }
                return (chosen, current.map(\.app.id.rawValue), versions.map(\.app.version))
            }
            guard let deployed = found.0 else {
                if let version, !found.2.isEmpty {
                    throw ImportFailure(message: "\(visible(id)) was never served at version \(version): served were "
                        + Array(Set(found.2)).sorted().map(String.init).joined(separator: ", "))
                }
                throw ImportFailure(message: "no app \(visible(id)) is deployed: deployed are \(found.1.joined(separator: ", "))")
            }
            print("# \(deployed.app.id.rawValue), version \(deployed.app.version), revision \(deployed.revision), deployed at \(Self.time(deployed.deployedAt))")
            print(deployed.declaration, terminator: deployed.declaration.hasSuffix("\n") ? "" : "\n")
        }

        static func time(_ millis: Int64) -> String {
            millis == 0 ? "first start" : ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
        }
    }
}

/// A declaration's mistake as a line: the file, its line, its place and what is wrong.
private func said(_ problem: DeclarationProblem, in file: String) -> String {
    "\(file):" + (problem.line.map { "\($0):" } ?? "") + " \(problem.place) \(problem.message)"
}

/// `text` as a line may show it: a control character as its code, at most 40 characters.
private func visible(_ text: String) -> String {
    let shown = text.unicodeScalars.prefix(40).map { scalar in
        scalar.properties.generalCategory == .control ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
    }.joined()
    return "'" + shown + (text.unicodeScalars.count > 40 ? "…" : "") + "'"
}

/// A declaration file's text, or why it cannot be one (too big, not UTF-8, not readable).
private func readDeclaration(_ file: String) throws -> String {
    let url = URL(fileURLWithPath: file)
    let size: Int
    do {
        size = try url.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0
    } catch {
        throw ImportFailure(message: "cannot be read (\((error as? CocoaError)?.code == .fileReadNoSuchFile ? "no such file" : "not a readable file"))")
    }
    guard size <= AppDeclaration.Limits.fileBytes else {
        throw ImportFailure(message: "is \(size / 1024) KiB: a declaration is at most \(AppDeclaration.Limits.fileBytes / 1024) KiB")
    }
    guard let data = try? Data(contentsOf: url) else { throw ImportFailure(message: "cannot be read (not a readable file)") }
    guard let text = String(data: data, encoding: .utf8) else { throw ImportFailure(message: "is not UTF-8 text") }
    return text
}
