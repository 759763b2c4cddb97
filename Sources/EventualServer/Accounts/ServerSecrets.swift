import EventualAPI
import Crypto
import EventualStorage
import Foundation
import SQLKit

/// Keys the server generates on first start and keeps in the database, so that every server
/// process on one database signs and checks with the same key.
enum ServerSecrets {
    static func key(named name: String, in database: Database) async throws -> Data {
        try await database.withConnection { sql in
            let fresh = Base64URL.encode(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
            // NB: two processes starting at once both try; the first insert wins and both read it.
            try await sql.insert(into: "server_secrets").columns("name", "value", "created_at")
                .values(SQLBind(name), SQLBind(fresh), SQLBind(UnixMillis.now()))
                .ignoringConflicts(with: ["name"])
                .run()
            guard let row = try await sql.select().column("value").from("server_secrets")
                .where("name", .equal, name).first(),
                let data = Base64URL.decode(try row.decode(column: "value", as: String.self)), data.count == 32
            else { throw StorageError.corrupt("server secret '\(name)' is missing or malformed") }
            return data
        }
    }
}
