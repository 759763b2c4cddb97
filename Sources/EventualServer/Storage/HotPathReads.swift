import SQLKit

/// The two reads every barcode look-up makes: the access-token check and the products of a
/// GTIN. On SQLite they run as prepared statements on the request's own thread (see
/// `SQLiteFastReader`); on PostgreSQL through the pool. Both run the same SQLKit queries.
struct HotPathReads: Sendable {
    private let database: Database
    /// The queries rendered once in SQLite's dialect, for the fast reader.
    private let tokenSQL: String
    private let lookupSQL: String

    static func prepare(_ database: Database) async throws -> HotPathReads {
        let (tokenSQL, lookupSQL) = try await database.withConnection { sql in
            (sql.serialize(AccessTokenRecord.query(tokenHash: "", on: sql).select).sql,
             sql.serialize(ProductRecord.lookup(gtin: "", on: sql).select).sql)
        }
        return HotPathReads(database: database, tokenSQL: tokenSQL, lookupSQL: lookupSQL)
    }

    func token(hash: String) async throws -> AccessTokenRecord? {
        guard let reader = database.fastReader else {
            return try await database.withConnection { sql in
                try await AccessTokenRecord.query(tokenHash: hash, on: sql).first().map(AccessTokenRecord.init(row:))
            }
        }
        return try reader.read { connection in
            var record: AccessTokenRecord?
            try connection.query(tokenSQL, [hash]) { row in
                guard let userID = row.text(0) else { throw StorageError.corrupt("an access token without a user") }
                record = AccessTokenRecord(userID: userID, expiresAt: row.int64(1), revokedAt: row.text(2).map { _ in row.int64(2) })
            }
            return record
        }
    }

    func products(gtin: String) async throws -> [ProductRecord] {
        guard let reader = database.fastReader else {
            return try await database.withConnection { sql in
                try await ProductRecord.lookup(gtin: gtin, on: sql).all().map(ProductRecord.init(row:))
            }
        }
        return try reader.read { connection in
            var products: [ProductRecord] = []
            try connection.query(lookupSQL, [gtin]) { row in products.append(try ProductRecord(cursor: row)) }
            return products
        }
    }
}
