import ArgumentParser
import EventualServer
import Foundation
import Hummingbird
import Logging

/// `eventual-server`: runs the Eventual server until SIGINT or SIGTERM.
@main
struct App: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eventual-server",
        abstract: "The Eventual server: barcode knowledge base and sync API, on SQLite or PostgreSQL."
    )

    @Option(help: "Address to listen on.")
    var hostname = "127.0.0.1"

    @Option(help: "Port to listen on.")
    var port = 8080

    @Option(help: "An SQLite file path or a postgres:// URL (default: $DATABASE_URL, else ./data/eventual.sqlite).")
    var database: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    func run() async throws {
        guard let level = Logger.Level(rawValue: logLevel.lowercased()) else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardOutput(label: label)
            handler.logLevel = level
            return handler
        }
        let environment = ProcessInfo.processInfo.environment
        let location = (database ?? environment["DATABASE_URL"]).map(DatabaseLocation.init(argument:)) ?? .defaultSQLite
        let configuration = ServerConfiguration(
            hostname: hostname, port: port, database: location, logLevel: level,
            sessionKey: environment["EVENTUAL_SESSION_KEY"]
        )
        let app = try await buildApplication(configuration)
        try await app.runService()
    }
}
