import EventualStorage
import Foundation
import SQLKit

/// A row of `products`.
struct ProductRecord: Sendable, Equatable {
    let id: String
    let gtin: String
    let barcode: String
    let name: String
    let description: String?
    let img: String?
    let userID: String
    let score: Int64
    let createdAt: Int64
    let updatedAt: Int64

    /// Column order shared by the SQLKit and the SQLite fast-path decoders.
    static let columns = ["id", "gtin", "barcode", "name", "description", "img", "user_id", "score", "created_at", "updated_at"]

    init(id: String, gtin: String, barcode: String, name: String, description: String?, img: String?,
         userID: String, score: Int64, createdAt: Int64, updatedAt: Int64) {
        self.id = id
        self.gtin = gtin
        self.barcode = barcode
        self.name = name
        self.description = description
        self.img = img
        self.userID = userID
        self.score = score
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    init(row: any SQLRow) throws {
        id = try row.decode(column: "id", as: String.self)
        gtin = try row.decode(column: "gtin", as: String.self)
        barcode = try row.decode(column: "barcode", as: String.self)
        name = try row.decode(column: "name", as: String.self)
        description = try row.decode(column: "description", as: String?.self)
        img = try row.decode(column: "img", as: String?.self)
        userID = try row.decode(column: "user_id", as: String.self)
        score = try row.decode(column: "score", as: Int64.self)
        createdAt = try row.decode(column: "created_at", as: Int64.self)
        updatedAt = try row.decode(column: "updated_at", as: Int64.self)
    }

    init(cursor: SQLiteRowCursor) throws {
        guard let id = cursor.text(0), let gtin = cursor.text(1), let barcode = cursor.text(2),
              let name = cursor.text(3), let userID = cursor.text(6)
        else { throw StorageError.corrupt("a product row has a NULL in a NOT NULL column") }
        self.init(id: id, gtin: gtin, barcode: barcode, name: name, description: cursor.text(4), img: cursor.text(5),
                  userID: userID, score: cursor.int64(7), createdAt: cursor.int64(8), updatedAt: cursor.int64(9))
    }

    /// The look-up: one range scan of `products_by_gtin_score`, best score first, then oldest first.
    static func lookup(gtin: String, on sql: any SQLDatabase) -> SQLSelectBuilder {
        sql.select().columns(columns.map { SQLColumn($0) }).from("products")
            .where("gtin", .equal, gtin)
            .orderBy("score", .descending).orderBy("created_at", .ascending)
    }
}

/// Products of the knowledge base; their votes in `ProductStore+Votes.swift`.
struct ProductStore: Sendable {
    let database: Database

    func insert(_ product: ProductRecord, on sql: any SQLDatabase) async throws {
        try await sql.insert(into: "products")
            .columns(ProductRecord.columns)
            .values(
                SQLBind(product.id), SQLBind(product.gtin), SQLBind(product.barcode), SQLBind(product.name),
                SQLBind(product.description), SQLBind(product.img), SQLBind(product.userID), SQLBind(product.score),
                SQLBind(product.createdAt), SQLBind(product.updatedAt)
            )
            .run()
    }

    /// The name of the best product of a GTIN (as the look-up orders them), or nil when none is known.
    func name(gtin: String) async throws -> String? {
        try await database.withConnection { sql in
            try await sql.select().column("name").from("products").where("gtin", .equal, gtin)
                .orderBy("score", .descending).orderBy("created_at", .ascending).limit(1)
                .first()?.decode(column: "name", as: String.self)
        }
    }

    /// Refuses a new product from a user who already stores `quota` of them.
    func requireRoom(for userID: String, quota: Int, on sql: any SQLDatabase) async throws {
        let stored = try await sql.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "stored")
            .from("products").where("user_id", .equal, userID)
            .first()?.decode(column: "stored", as: Int.self) ?? 0
        guard stored < quota else {
            throw Refusal.quotaExceeded("Quota reached: you have created \(stored) products, the most one user may store; delete some first")
        }
    }

    func product(id: String, on sql: any SQLDatabase) async throws -> ProductRecord? {
        try await sql.select().columns(ProductRecord.columns.map { SQLColumn($0) }).from("products")
            .where("id", .equal, id).first().map(ProductRecord.init(row:))
    }

    /// Deletes a product (its votes go with it) if `userID` created it.
    func delete(id: String, by userID: String) async throws -> ProductRecord {
        try await database.transaction { sql in
            guard let product = try await product(id: id, on: sql) else { throw Refusal.notFound("no product with id \(id)") }
            guard product.userID == userID else { throw Refusal.notTheOwner("only the user who created a product may delete it") }
            try await sql.delete(from: "products").where("id", .equal, id).run()
            try await StorageUsage.add(-StorageUsage.bytes(of: product), for: userID, quota: .max, on: sql)
            return product
        }
    }
}
