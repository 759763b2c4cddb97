import ArgumentParser
import Foundation

/// `eventual-server`: runs the server (the default), imports data, or manages roles.
@main
struct App: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eventual-server",
        abstract: "The Eventual server: barcode knowledge base and sync API, on SQLite or PostgreSQL.",
        subcommands: [Serve.self, ImportProducts.self, UserCommand.self, ImportPoints.self, ImportPackaging.self, ImportShops.self],
        defaultSubcommand: Serve.self
    )

    /// As ArgumentParser's, except that a malformed argument is one line on stderr (exit 64),
    /// without the usage that follows it there.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            guard code == .validationFailure else { exit(withError: error) }
            let first = fullMessage(for: error).split(separator: "\n").first.map(String.init) ?? "Error: a malformed argument"
            FileHandle.standardError.write(Data("\(first) (see eventual-server --help)\n".utf8))
            Foundation.exit(code.rawValue)
        }
    }
}
