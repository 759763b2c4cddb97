import EventualAPI
import EventualStorage
import Foundation
import SQLKit

/// SpendiQ's server data: who is verified, last seen and where, shops and their offers, views.
struct SpendingStore: Sendable {
    let database: Database
    /// Most offers one answer carries unless the request asks for more (at most `maxOffersLimit`).
    static let maxOffers = 200
    static let maxOffersLimit = 1000

    /// The user's verification and last-seen times (nil when there is no such user).
    func standing(userID: String) async throws -> (verifiedAt: Int64?, lastSeenAt: Int64?)? {
        try await database.withConnection { sql in
            guard let row = try await sql.select().columns("email_verified_at", "last_seen_at").from("users")
                .where("id", .equal, userID).first() else { return nil }
            return (try row.decode(column: "email_verified_at", as: Int64?.self), try row.decode(column: "last_seen_at", as: Int64?.self))
        }
    }

    /// Moves "last seen" forward (a late, older report changes nothing).
    func recordLastSeen(userID: String, at: Int64) async throws {
        try await database.withConnection { sql in
            try await sql.raw("""
                UPDATE users SET last_seen_at = \(bind: at)
                WHERE id = \(bind: userID) AND (last_seen_at IS NULL OR last_seen_at < \(bind: at))
                """).run()
        }
    }

    /// Keeps the newest position of a user.
    func recordLocation(userID: String, latitude: Double, longitude: Double, at: Int64) async throws {
        try await database.withConnection { sql in
            try await sql.raw("""
                INSERT INTO spending_locations (user_id, latitude, longitude, at)
                VALUES (\(bind: userID), \(bind: latitude), \(bind: longitude), \(bind: at))
                ON CONFLICT (user_id) DO UPDATE SET latitude = excluded.latitude, longitude = excluded.longitude, at = excluded.at
                WHERE spending_locations.at < excluded.at
                """).run()
        }
    }

    /// The last position a user's devices sent, if any.
    func location(userID: String) async throws -> (latitude: Double, longitude: Double, at: Int64)? {
        try await database.withConnection { sql in
            try await sql.select().columns("latitude", "longitude", "at").from("spending_locations").where("user_id", .equal, userID).first()
                .map { (try $0.decode(column: "latitude", as: Double.self), try $0.decode(column: "longitude", as: Double.self),
                        try $0.decode(column: "at", as: Int64.self)) }
        }
    }

    /// The first `limit` offers of shops within `radius` metres of a point, featured first, then
    /// nearest, and how many lie within it.
    func offers(latitude: Double, longitude: Double, radius: Double, limit: Int = maxOffers, now: Int64) async throws
        -> (offers: [Components.Schemas.Offer], total: Int) {
        // NB: a bounding box the index can use first, then the exact distance.
        let dLat = radius / 111_000
        let dLon = radius / max(1_000, 111_000 * cos(latitude * .pi / 180))
        let rows = try await database.withConnection { sql in
            try await sql.raw("""
                SELECT o.id, o.shop_id, s.name, s.shop_type, o.title, o.description, o.category, o.discount_percent,
                       s.latitude, s.longitude, o.featured, o.demo, o.valid_until
                FROM shops s JOIN offers o ON o.shop_id = s.id
                WHERE s.latitude BETWEEN \(bind: latitude - dLat) AND \(bind: latitude + dLat)
                  AND s.longitude BETWEEN \(bind: longitude - dLon) AND \(bind: longitude + dLon)
                  AND (o.valid_until IS NULL OR o.valid_until > \(bind: now))
                """).all()
        }
        var offers: [(Components.Schemas.Offer, Double)] = []
        for row in rows {
            let lat = try row.decode(column: "latitude", as: Double.self), lon = try row.decode(column: "longitude", as: Double.self)
            let distance = GeoPosition(latitude: latitude, longitude: longitude).distance(to: GeoPosition(latitude: lat, longitude: lon))
            guard distance <= radius else { continue }
            let type = try row.decode(column: "shop_type", as: String.self)
            offers.append((Components.Schemas.Offer(
                id: try row.decode(column: "id", as: String.self), shopId: try row.decode(column: "shop_id", as: String.self),
                shopName: try row.decode(column: "name", as: String?.self) ?? ShopCatalogue.label(type),
                shopType: type, title: try row.decode(column: "title", as: String.self),
                description: try row.decode(column: "description", as: String?.self),
                category: try row.decode(column: "category", as: String.self),
                discountPercent: try row.decode(column: "discount_percent", as: Int?.self),
                latitude: lat, longitude: lon, featured: try row.decode(column: "featured", as: Int.self) != 0,
                demo: try row.decode(column: "demo", as: Int.self) != 0,
                validUntil: try row.decode(column: "valid_until", as: Int64?.self)), distance))
        }
        offers.sort { ($0.0.featured ? 0 : 1, $0.1, $0.0.id) < ($1.0.featured ? 0 : 1, $1.1, $1.0.id) }
        return (offers.prefix(limit).map(\.0), offers.count)
    }

    /// Attaches an offer to a shop; nil when there is no such shop.
    func addOffer(_ offer: Components.Schemas.NewOffer, by userID: String, now: Int64) async throws -> Components.Schemas.Offer? {
        try await database.transaction { sql in
            guard let shop = try await sql.select().columns("name", "shop_type", "latitude", "longitude").from("shops")
                .where("id", .equal, offer.shopId).first() else { return nil }
            let id = UUID().uuidString.lowercased()
            try await sql.insert(into: "offers")
                .columns("id", "shop_id", "title", "description", "category", "discount_percent", "featured", "demo", "valid_until",
                         "created_by", "created_at")
                .values(SQLBind(id), SQLBind(offer.shopId), SQLBind(offer.title), SQLBind(offer.description), SQLBind(offer.category),
                        SQLBind(offer.discountPercent), SQLBind((offer.featured ?? false) ? 1 : 0), SQLBind(0), SQLBind(offer.validUntil),
                        SQLBind(userID), SQLBind(now))
                .run()
            let type = try shop.decode(column: "shop_type", as: String.self)
            return Components.Schemas.Offer(
                id: id, shopId: offer.shopId, shopName: try shop.decode(column: "name", as: String?.self) ?? ShopCatalogue.label(type),
                shopType: type, title: offer.title, description: offer.description, category: offer.category,
                discountPercent: offer.discountPercent, latitude: try shop.decode(column: "latitude", as: Double.self),
                longitude: try shop.decode(column: "longitude", as: Double.self), featured: offer.featured ?? false, demo: false,
                validUntil: offer.validUntil)
        }
    }

    /// Counts a view once per key; false when there is no such offer.
    func countView(offerID: String, userID: String, key: String, now: Int64) async throws -> Bool {
        try await database.withConnection { sql in
            guard try await sql.select().column("id").from("offers").where("id", .equal, offerID).first() != nil else { return false }
            try await sql.raw("""
                INSERT INTO offer_views (user_id, view_key, offer_id, viewed_at)
                VALUES (\(bind: userID), \(bind: key), \(bind: offerID), \(bind: now))
                ON CONFLICT (user_id, view_key) DO NOTHING
                """).run()
            return true
        }
    }

    /// How many times an offer was viewed.
    func views(offerID: String) async throws -> Int {
        try await database.withConnection { sql in
            try await sql.raw("SELECT COUNT(*) AS n FROM offer_views WHERE offer_id = \(bind: offerID)").first()?
                .decode(column: "n", as: Int.self) ?? 0
        }
    }

    /// The synced transactions that are not deleted of every space the user is a member of (their
    /// own, and the shared ones they have not left).
    func transactions(userID: String) async throws -> [SpentRecord] {
        let rows = try await database.withConnection { sql in
            // NB: a person's own space has their id, even before its first push made it a member's.
            try await sql.raw("""
                SELECT record_id, fields, field_stamps, counter_deltas, tombstone FROM sync_records
                WHERE collection = \(bind: SyncCollections.spendingTransactions.name)
                  AND (space_id = \(bind: userID)
                       OR space_id IN (SELECT space_id FROM space_members WHERE user_id = \(bind: userID) AND left_at IS NULL))
                """).all()
        }
        return try rows.compactMap { row in
            let state = try SyncRecordState(.init(
                fields: try row.decode(column: "fields", as: String.self), fieldStamps: try row.decode(column: "field_stamps", as: String.self),
                counterDeltas: try row.decode(column: "counter_deltas", as: String?.self), tombstone: try row.decode(column: "tombstone", as: String?.self)))
            guard !state.isDeleted else { return nil }
            return SpentRecord(id: try row.decode(column: "record_id", as: String.self), fields: state.fields)
        }
    }
}
