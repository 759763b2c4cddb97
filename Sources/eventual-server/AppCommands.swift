import ArgumentParser
import EventualAPI
import Foundation

/// `eventual-server apps`: an app's declaration checked, or a built-in app's written out.
struct AppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Check an app's declaration file, or print a built-in app's (docs/app-declaration.schema.json).",
        subcommands: [Check.self, Export.self]
    )

    /// `apps check FILE...`: every mistake of each file, a line each, with its line and place.
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Check app declaration files: every mistake in one line with its place, exit 1 if any.",
            discussion: "Example: eventual-server apps check chores.app.yaml")

        @Argument(help: "The declaration files (YAML or JSON).") var files: [String]

        func validate() throws {
            if files.isEmpty { throw ValidationError("Give a declaration file to check") }
        }

        func run() async throws {
            // NB: the built-in apps own their collections: a file may not claim one of another app's.
            let owners = Dictionary(EventualApp.all.flatMap { app in app.collections.map { ($0.name, app.id.rawValue) } }) { first, _ in first }
            var failed = false
            for file in files {
                let text: String
                do {
                    let url = URL(fileURLWithPath: file)
                    let size = (try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
                    guard size <= AppDeclaration.Limits.fileBytes else {
                        throw ImportFailure(message: "is \(size / 1024) KiB: a declaration is at most \(AppDeclaration.Limits.fileBytes / 1024) KiB")
                    }
                    guard let decoded = String(data: try Data(contentsOf: url), encoding: .utf8) else {
                        throw ImportFailure(message: "is not UTF-8 text")
                    }
                    text = decoded
                } catch let failure as ImportFailure {
                    print("\(file): \(failure.message)")
                    failed = true
                    continue
                } catch {
                    print("\(file): cannot be read (\((error as? CocoaError)?.code == .fileReadNoSuchFile ? "no such file" : "not a readable file"))")
                    failed = true
                    continue
                }
                switch AppDeclaration.read(text, owners: owners) {
                case .success(let declaration):
                    let app = declaration.app
                    let fields = app.collections.reduce(0) { $0 + $1.fields.count }
                    print("\(file): app \(app.id.rawValue) (\(app.title)): \(app.collections.count) collection(s), \(fields) field(s): no mistake")
                case .failure(let problems):
                    failed = true
                    for problem in problems.problems {
                        print("\(file):" + (problem.line.map { "\($0):" } ?? "") + " \(problem.place) \(problem.message)")
                    }
                }
            }
            if failed { throw ExitCode.failure }
        }
    }

    /// `apps export ID`: a built-in app's declaration, as a file would hold it.
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Print a built-in app's declaration (pantry, spendiq, sustainu, chores) as YAML.",
            discussion: "Example: eventual-server apps export pantry > pantry.app.yaml")

        @Argument(help: "The app's id.") var id: String

        func run() async throws {
            guard let app = EventualApp.all.first(where: { $0.id.rawValue == id }) else {
                throw ValidationError("No built-in app is called \(id): use \(EventualApp.all.map(\.id.rawValue).joined(separator: ", "))")
            }
            print(AppDeclaration.yaml(of: app), terminator: "")
        }
    }
}
