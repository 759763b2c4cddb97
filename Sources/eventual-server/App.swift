import ArgumentParser
import Foundation

/// `eventual-server`: runs the server (the default), imports data, or manages roles.
@main
struct App: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eventual-server",
        abstract: "The Eventual server: barcode knowledge base and sync API, on SQLite or PostgreSQL.",
        subcommands: [Serve.self, Backup.self, RecordCommand.self, AppCommand.self, ImportProducts.self, UserCommand.self, ImportPoints.self, ImportPackaging.self, ImportShops.self],
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
            let lines = fullMessage(for: error).split(separator: "\n").map(String.init)
            let first = lines.first ?? "Error: a malformed argument"
            // NB: the usage's last line names the subcommand's help ("See 'eventual-server serve --help' …").
            let help = lines.lazy.compactMap { line -> String? in
                guard let start = line.range(of: "See '"), let end = line[start.upperBound...].firstIndex(of: "'") else { return nil }
                return String(line[start.upperBound..<end])
            }.first ?? "eventual-server --help"
            FileHandle.standardError.write(Data("\(first) (see \(help))\n".utf8))
            Foundation.exit(code.rawValue)
        }
    }
}
