import ArgumentParser
import EventualServer
import EventualStorage
import Foundation
import Logging

/// `--database`, shared by every subcommand.
struct DatabaseOption: ParsableArguments {
    @Option(help: "An SQLite file path or a postgres:// URL (default: $DATABASE_URL, else ./data/eventual.sqlite).")
    var database: String?

    var location: DatabaseLocation {
        (database ?? ProcessInfo.processInfo.environment["DATABASE_URL"]).map(DatabaseLocation.init(argument:)) ?? .defaultSQLite
    }
}

/// A command's log: warnings and errors only, its own lines say the rest.
var quietLogger: Logger {
    var logger = Logger(label: "eventual-server")
    logger.logLevel = .warning
    return logger
}

/// Opens the database named by the options, runs `body`, and closes it whatever happens; every
/// failure becomes one line.
func withDatabase<T: Sendable>(_ option: DatabaseOption, _ body: (Database) async throws -> T) async throws -> T {
    var logger = Logger(label: "eventual-server")
    logger.logLevel = .warning
    let opened: Database
    do {
        opened = try await Database.open(option.location, logger: logger)
    } catch {
        throw ImportFailure(message: "cannot open the database \(option.location): \(error)")
    }
    do {
        let result = try await body(opened)
        await opened.close()
        return result
    } catch {
        await opened.close()
        throw ImportFailure(message: "\(error)")
    }
}
