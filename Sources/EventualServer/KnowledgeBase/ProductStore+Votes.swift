import Foundation
import SQLKit

/// A row of `votes`.
struct VoteRecord: Sendable, Equatable {
    let id: String
    let productID: String
    let userID: String
    let rating: Int
    let createdAt: Int64
    let updatedAt: Int64
}

/// Votes: one per person and product, its rating summed into the product's `score`.
extension ProductStore {
    /// Records `userID`'s rating of a product, replacing an earlier one, and keeps the product's
    /// score (the sum of ratings) in the same transaction.
    func vote(productID: String, userID: String, rating: Int, allowedGTIN: String, now: Int64) async throws -> VoteRecord {
        try await database.transaction { sql in
            guard let product = try await product(id: productID, on: sql) else {
                throw Refusal.notFound("no product with id \(productID)")
            }
            guard product.gtin == allowedGTIN else {
                throw Refusal.notPermitted("session token was issued for another barcode than this product's")
            }
            let earlier = try await sql.select().columns("id", "rating", "created_at").from("votes")
                .where("product_id", .equal, productID).where("user_id", .equal, userID).first()
            let vote: VoteRecord
            let delta: Int
            if let earlier {
                let previous = try earlier.decode(column: "rating", as: Int.self)
                vote = VoteRecord(id: try earlier.decode(column: "id", as: String.self), productID: productID, userID: userID,
                                  rating: rating, createdAt: try earlier.decode(column: "created_at", as: Int64.self), updatedAt: now)
                delta = rating - previous
                try await sql.update("votes").set("rating", to: rating).set("updated_at", to: now)
                    .where("id", .equal, vote.id).run()
            } else {
                vote = VoteRecord(id: UUID().uuidString.lowercased(), productID: productID, userID: userID,
                                  rating: rating, createdAt: now, updatedAt: now)
                delta = rating
                try await sql.insert(into: "votes")
                    .columns("id", "product_id", "user_id", "rating", "created_at", "updated_at")
                    .values(SQLBind(vote.id), SQLBind(productID), SQLBind(userID), SQLBind(rating), SQLBind(now), SQLBind(now))
                    .run()
            }
            if delta != 0 {
                try await sql.update("products")
                    .set(SQLIdentifier("score"), to: SQLBinaryExpression(SQLIdentifier("score"), .add, SQLBind(delta)))
                    .where("id", .equal, productID).run()
            }
            return vote
        }
    }
}
