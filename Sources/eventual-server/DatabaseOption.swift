import ArgumentParser
import EventualServer
import Foundation

/// `--database`, shared by every subcommand.
struct DatabaseOption: ParsableArguments {
    @Option(help: "An SQLite file path or a postgres:// URL (default: $DATABASE_URL, else ./data/eventual.sqlite).")
    var database: String?

    var location: DatabaseLocation {
        (database ?? ProcessInfo.processInfo.environment["DATABASE_URL"]).map(DatabaseLocation.init(argument:)) ?? .defaultSQLite
    }
}
