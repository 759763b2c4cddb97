import EventualStorage
import PostgresNIO
import SQLKit

/// The reads that answer a barcode look-up: the access-token check (which every authenticated
/// request makes too) and the products of a GTIN with its packaging. On SQLite they run as prepared statements on the request's own thread (see
/// `SQLiteFastReader`); on PostgreSQL as one prepared statement, one round trip, per look-up.
struct BarcodeLookupReads: Sendable {
    private let database: Database
    /// The queries rendered once in SQLite's dialect, for the fast reader.
    private let tokenSQL: String
    private let lookupSQL: String

    static func prepare(_ database: Database) async throws -> BarcodeLookupReads {
        let (tokenSQL, lookupSQL) = try await database.withConnection { sql in
            (sql.serialize(AccessTokenRecord.query(tokenHash: "", on: sql).select).sql,
             sql.serialize(ProductRecord.lookup(gtin: "", on: sql).select).sql)
        }
        return BarcodeLookupReads(database: database, tokenSQL: tokenSQL, lookupSQL: lookupSQL)
    }

    func token(hash: String) async throws -> AccessTokenRecord? {
        if let client = database.postgresClient {
            for try await (userID, expiresAt, revokedAt) in try await client.execute(TokenStatement(tokenHash: hash)) {
                return AccessTokenRecord(userID: userID, expiresAt: expiresAt, revokedAt: revokedAt)
            }
            return nil
        }
        guard let reader = database.fastReader else {
            return try await database.withConnection { sql in
                try await AccessTokenRecord.query(tokenHash: hash, on: sql).first().map(AccessTokenRecord.init(row:))
            }
        }
        return try reader.read { connection in try token(hash: hash, on: connection) }
    }

    /// Of `hashes`, the tokens good at `now` (neither revoked nor expired), read
    /// `tokensPerStatement` a statement: a sweep of every live channel's token is a few statements.
    func goodTokens(among hashes: Set<String>, at now: Int64) async throws -> Set<String> {
        var good: Set<String> = []
        for chunk in hashes.sorted().chunks(of: Self.tokensPerStatement) {
            let found = try await database.withConnection { sql in
                try await AccessTokenRecord.goodHashes(among: Array(chunk), at: now, on: sql).all(decodingColumn: "token_hash", as: String.self)
            }
            good.formUnion(found)
        }
        return good
    }

    /// Bound values per statement of `goodTokens`, well under SQLite's and PostgreSQL's limits.
    static let tokensPerStatement = 500

    /// The token's record and the GTIN's products, best first, read together, with the packaging
    /// catalogue's parts JSON for the GTIN when it has products and the catalogue knows it.
    func lookup(tokenHash: String, gtin: String) async throws -> (token: AccessTokenRecord?, products: [ProductRecord], packaging: String?) {
        if let client = database.postgresClient {
            // NB: one statement, one round trip: the token's row joined to the GTIN's products
            // (none: a single row with NULL product columns; no token: no row at all) and to the
            // GTIN's packaging (one row by primary key).
            var token: AccessTokenRecord?
            var products: [ProductRecord] = []
            var packaging: String?
            for try await row in try await client.execute(LookupStatement(tokenHash: tokenHash, gtin: gtin)) {
                token = AccessTokenRecord(userID: row.userID, expiresAt: row.expiresAt, revokedAt: row.revokedAt)
                if let product = row.product { products.append(product) }
                packaging = packaging ?? row.packaging
            }
            return (token, products, packaging)
        }
        guard let reader = database.fastReader else {
            let products = try await products(gtin: gtin)
            let packaging = products.isEmpty ? nil : try await database.withConnection { sql in
                try await sql.select().column("parts").from("recycling_packaging").where("gtin", .equal, gtin).first()?
                    .decode(column: "parts", as: String.self)
            }
            return (try await token(hash: tokenHash), products, packaging)
        }
        return try reader.read { connection in
            let token = try token(hash: tokenHash, on: connection)
            guard token != nil else { return (nil, [], nil) }
            var products: [ProductRecord] = []
            try connection.query(lookupSQL, [gtin]) { row in products.append(try ProductRecord(cursor: row)) }
            var packaging: String?
            if !products.isEmpty {
                try connection.query(PackagingCatalogue.partsSQL, [gtin]) { row in packaging = row.text(0) }
            }
            return (token, products, packaging)
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

    private func token(hash: String, on connection: SQLiteReadConnection) throws -> AccessTokenRecord? {
        var record: AccessTokenRecord?
        try connection.query(tokenSQL, [hash]) { row in
            guard let userID = row.text(0) else { throw StorageError.corrupt("an access token without a user") }
            record = AccessTokenRecord(userID: userID, expiresAt: row.int64(1), revokedAt: row.text(2).map { _ in row.int64(2) })
        }
        return record
    }
}

/// The access-token check of every authenticated request, prepared once per PostgreSQL connection.
private struct TokenStatement: PostgresPreparedStatement {
    static let sql = "SELECT user_id, expires_at, revoked_at FROM access_tokens WHERE token_hash = $1"
    typealias Row = (String, Int64, Int64?)

    let tokenHash: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(tokenHash)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// A look-up on PostgreSQL: the token's row and the GTIN's products in one statement.
private struct LookupStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT t.user_id, t.expires_at, t.revoked_at,
               p.id, p.gtin, p.barcode, p.name, p.description, p.img, p.user_id, p.score, p.created_at, p.updated_at,
               k.parts
        FROM access_tokens t LEFT JOIN products p ON p.gtin = $2
        LEFT JOIN recycling_packaging k ON k.gtin = p.gtin
        WHERE t.token_hash = $1
        ORDER BY p.score DESC, p.created_at ASC
        """

    struct Row {
        let userID: String
        let expiresAt: Int64
        let revokedAt: Int64?
        let product: ProductRecord?
        /// The GTIN's packaging parts (JSON), when it has products and the catalogue knows it.
        let packaging: String?
    }

    let tokenHash: String
    let gtin: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(tokenHash)
        bindings.append(gtin)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let (userID, expiresAt, revokedAt, id, gtin, barcode, name, description, img, owner, score, createdAt, updatedAt, packaging) =
            try row.decode((String, Int64, Int64?, String?, String?, String?, String?, String?, String?, String?, Int64?, Int64?, Int64?,
                            String?).self)
        var product: ProductRecord?
        if let id, let gtin, let barcode, let name, let owner, let score, let createdAt, let updatedAt {
            product = ProductRecord(id: id, gtin: gtin, barcode: barcode, name: name, description: description, img: img,
                                    userID: owner, score: score, createdAt: createdAt, updatedAt: updatedAt)
        }
        return Row(userID: userID, expiresAt: expiresAt, revokedAt: revokedAt, product: product, packaging: packaging)
    }
}
