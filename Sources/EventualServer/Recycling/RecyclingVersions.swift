import EventualStorage
import SQLKit

/// The counters behind the recycling ETags (table `recycling_versions`).
enum RecyclingVersions {
    enum Name: String, Sendable {
        /// Changes when an import adds or changes a point.
        case points
        /// Changes with every counted visit.
        case visits
        /// The packaging catalogue's newest change.
        case packaging
    }

    /// Adds one to a counter and returns its new value. NB: the UPDATE locks the counter's row until
    /// the transaction ends, so writers of one counter take turns and their values never repeat.
    @discardableResult
    static func bump(_ name: Name, by amount: Int64 = 1, on sql: any SQLDatabase) async throws -> Int64 {
        try await sql.update("recycling_versions")
            .set(SQLIdentifier("version"), to: SQLBinaryExpression(SQLIdentifier("version"), .add, SQLBind(amount)))
            .where("name", .equal, name.rawValue).run()
        return try await value(name, on: sql)
    }

    static func value(_ name: Name, on sql: any SQLDatabase) async throws -> Int64 {
        guard let row = try await sql.select().column("version").from("recycling_versions").where("name", .equal, name.rawValue).first()
        else { throw StorageError.corrupt("recycling_versions has no '\(name.rawValue)' row") }
        return try row.decode(column: "version", as: Int64.self)
    }

    /// All three counters in one read.
    static func all(on sql: any SQLDatabase) async throws -> [Name: Int64] {
        var values: [Name: Int64] = [:]
        for row in try await sql.select().columns("name", "version").from("recycling_versions").all() {
            if let name = Name(rawValue: try row.decode(column: "name", as: String.self)) {
                values[name] = try row.decode(column: "version", as: Int64.self)
            }
        }
        return values
    }
}
