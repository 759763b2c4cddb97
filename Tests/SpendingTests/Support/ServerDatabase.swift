@_exported import EventualTestSupport
import EventualServer
import Foundation
import Logging

/// A second handle on the live server's SQLite database (for admin set-up and checks).
func serverDatabase(_ scratch: ScratchFolder) async throws -> Database {
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    return try await Database.open(.sqlite(path: scratch.url.appendingPathComponent("server.sqlite").path), logger: logger)
}
