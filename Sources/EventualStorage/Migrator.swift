import SQLKit

/// Applies the migrations a database lacks, each in its own transaction, and records them in
/// `schema_migrations`.
struct Migrator {
    let database: Database

    func migrate() async throws {
        try await database.withConnection { sql in
            try await sql.raw("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version INTEGER PRIMARY KEY,
                    name TEXT NOT NULL,
                    applied_at BIGINT NOT NULL
                )
                """).run()
        }
        for migration in Migration.all {
            try await database.transaction { sql in
                if database.dialect == .postgres {
                    // NB: two servers starting together on one PostgreSQL must not both migrate.
                    try await sql.raw("SELECT pg_advisory_xact_lock(7340001)").run()
                }
                let applied = try await sql.select().column("version").from("schema_migrations")
                    .where("version", .equal, migration.version).first()
                guard applied == nil else { return }
                for statement in migration.statements {
                    try await sql.raw(SQLQueryString(statement)).run()
                }
                try await sql.insert(into: "schema_migrations")
                    .columns("version", "name", "applied_at")
                    .values(SQLBind(migration.version), SQLBind(migration.name), SQLBind(StorageClock.unixMillis()))
                    .run()
            }
        }
    }
}
