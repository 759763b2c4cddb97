import Foundation
import Logging
import SQLKit
import EventualServer

/// One usage event as a server filed it.
public struct FiledEventRow: Sendable, Equatable {
    public let id: String
    public let app: String
    public let name: String
    public let properties: String
}

/// The usage events a live server filed in its SQLite file, oldest first.
///
/// NB: read through the server's own SQLite (SQLiteNIO's), never through GRDB's: two copies of
/// SQLite in one process do not see each other's POSIX locks, and closing the second one's file
/// releases the first one's locks, after which the server's later writes went unseen.
public func filedEvents(inServerDatabase path: String) async throws -> [FiledEventRow] {
    var logger = Logger(label: "test-filed-events")
    logger.logLevel = .critical
    let database = try await Database.open(.sqlite(path: path), logger: logger)
    do {
        let rows = try await database.withConnection { sql in
            try await sql.raw("SELECT event_id, app, name, properties FROM analytics_events ORDER BY occurred_at, event_id").all()
        }
        await database.close()
        return try rows.map {
            FiledEventRow(id: try $0.decode(column: "event_id", as: String.self), app: try $0.decode(column: "app", as: String.self),
                          name: try $0.decode(column: "name", as: String.self), properties: try $0.decode(column: "properties", as: String.self))
        }
    } catch {
        await database.close()
        throw error
    }
}

extension ScratchFolder {
    /// The events filed by the server `withLiveServer` runs in this folder.
    public func filedEvents() async throws -> [FiledEventRow] {
        try await EventualTestSupport.filedEvents(inServerDatabase: url.appendingPathComponent("server.sqlite").path)
    }
}
