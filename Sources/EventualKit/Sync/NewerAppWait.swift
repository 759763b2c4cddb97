import EventualAPI
import Foundation
import GRDB

/// The changes a server cannot take yet because this device runs a newer version of its app than
/// the server serves (upgraded before the server was): the server answers them `rejected` with
/// code `newer_app`, and they wait in the outbox, neither failed nor sent again, with every later
/// change of the same record behind them, until the server serves the version. A round asks the
/// server which version it serves (`GET /v1/apps/{id}`) only while some wait.
enum NewerAppWait {
    /// The code the server gives such a change, and the one its outbox row keeps.
    static let code = "newer_app"

    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("eventual-engine-12-newer-app") { db in
            // NB: found by record when a batch is claimed, so that no later change of it overtakes one that waits.
            try db.execute(sql: """
                CREATE INDEX eventual_outbox_waiting_for_version ON eventual_outbox (operation, record_id) WHERE rejection_code = 'newer_app'
                """)
        }
    }

    /// Puts changes back to wait for the version, with the server's words.
    static func hold(_ waiting: [(id: String, message: String)], db: Database) throws {
        for (id, message) in waiting {
            try db.execute(sql: """
                UPDATE eventual_outbox SET state = 'pending', next_attempt_at = 0, last_error = ?, rejection_code = ? WHERE id = ?
                """, arguments: [message, code, id])
        }
    }

    /// How many changes wait for a newer version.
    /// NB: the code spelled in the statements, not bound: SQLite then reads the partial index of
    /// what waits (empty on almost every device) instead of the whole outbox, each round.
    static func count(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM eventual_outbox WHERE rejection_code = 'newer_app'") ?? 0
    }

    /// Lets them go with the next push.
    static func release(_ db: Database) throws {
        try db.execute(sql: "UPDATE eventual_outbox SET rejection_code = NULL, last_error = NULL WHERE rejection_code = 'newer_app'")
    }

    /// The claim's condition that leaves out what waits: the changes held, and those after them of
    /// the same record; none when nothing waits.
    /// NB: only then: checked for every row due, it made a drain of 10,000 changes sent one a
    /// request some 25 s slower (each claim reads every row due before it sorts them).
    static func claimCondition(_ db: Database) throws -> String {
        guard try count(db) > 0 else { return "" }
        return """
            AND (rejection_code IS NULL OR rejection_code != 'newer_app') AND NOT EXISTS (
                SELECT 1 FROM eventual_outbox w WHERE w.rejection_code = 'newer_app' AND w.operation = eventual_outbox.operation
                    AND w.record_id = eventual_outbox.record_id AND w.position < eventual_outbox.position)
            """
    }

    /// Asks the server which version of `app` it serves, when changes wait for a newer one, and
    /// lets them go once it serves this device's version or a later one. Returns how many still
    /// wait. Offline, or with no answer within `timeout`, they keep waiting.
    static func releaseIfServed(_ app: EventualApp, store: LocalStore, link: ServerLink, timeout: Duration = .seconds(5)) async -> Int {
        guard let waiting = try? await store.reader.read({ db in try count(db) }), waiting > 0 else { return 0 }
        guard case .deployed(let served)? = await link.deployedApp(app.id.rawValue, timeout: timeout), served.version >= app.version else {
            return waiting
        }
        return (try? await store.writer.write { db in
            try release(db)
            return 0
        }) ?? waiting
    }
}
