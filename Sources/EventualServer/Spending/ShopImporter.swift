import EventualAPI
import EventualStorage
import Foundation
import SQLKit

/// What a kind of shop (OpenStreetMap's `shop=` or `amenity=` value) means to SpendiQ.
enum ShopCatalogue {
    /// The spending category a shop type matters to.
    static func category(_ type: String) -> String {
        switch type {
        case "supermarket", "convenience", "bakery", "butcher", "greengrocer", "deli", "confectionery", "pastry", "wine",
             "alcohol", "beverages", "chocolate", "coffee", "tea", "seafood", "cheese", "marketplace",
             "restaurant", "cafe", "fast_food", "bar", "pub", "ice_cream", "food_court", "biergarten":
            return "food"
        case "pharmacy", "chemist", "optician", "medical_supply", "hearing_aids", "doctors", "dentist": return "health"
        case "car", "car_repair", "car_parts", "bicycle", "fuel", "ticket", "travel_agency", "motorcycle", "tyres": return "transport"
        case "hairdresser", "beauty", "cosmetics", "perfumery", "massage", "tattoo", "florist", "sports", "toys", "games",
             "music", "video", "photo", "art", "cinema", "theatre", "nightclub": return "leisure"
        case "books", "stationery", "newsagent", "kiosk", "computer", "copyshop": return "education"
        case "estate_agent", "furniture", "hardware", "doityourself", "interior_decoration", "houseware", "bed", "lighting": return "housing"
        default: return "shopping"
        }
    }

    /// The `amenity=*` values that are places to spend money at; every other amenity (a recycling
    /// container, a bench, a parking) is no shop and gets no offer.
    static let spendingAmenities: Set<String> = [
        "restaurant", "cafe", "fast_food", "bar", "pub", "ice_cream", "food_court", "biergarten", "marketplace", "pharmacy",
        "fuel", "cinema", "theatre", "nightclub", "car_rental", "bicycle_rental", "car_wash",
    ]
    /// `shop=*` values that say there is no shop.
    static let notShops: Set<String> = ["vacant", "no", "disused", "closed"]

    /// The shop type of a feature's properties, or nil when it is no place to spend money at.
    static func type(_ properties: [String: Any]) -> String? {
        if let shop = properties["shop"] as? String { return notShops.contains(shop) ? nil : shop }
        if let amenity = properties["amenity"] as? String { return spendingAmenities.contains(amenity) ? amenity : nil }
        return nil
    }

    /// A shop without a name is shown by its type: "supermarket", "fast food".
    static func label(_ type: String) -> String { type.replacingOccurrences(of: "_", with: " ") }

    /// The made-up offer `--demo-offers` gives a shop of this type: title and discount.
    static func demoOffer(_ type: String, name: String?) -> (title: String, discount: Int) {
        let label = name ?? "this \(self.label(type))"
        switch category(type) {
        case "food": return ("10% off at \(label)", 10)
        case "health": return ("5% off health products at \(label)", 5)
        case "transport": return ("15% off your next trip or service at \(label)", 15)
        case "leisure": return ("20% off a treat at \(label)", 20)
        case "education": return ("10% off books and supplies at \(label)", 10)
        case "housing": return ("10% off for your home at \(label)", 10)
        default: return ("15% off one item at \(label)", 15)
        }
    }
}

/// Loads shops from an OpenStreetMap GeoJSON export (points with `shop=*`, or an `amenity=*`
/// where money is spent); other features, such as recycling containers, are skipped and counted.
public struct ShopImporter: Sendable {
    let database: Database

    public init(database: Database) { self.database = database }

    /// What an import did.
    public struct Summary: Sendable, Equatable, CustomStringConvertible {
        public var imported = 0, updated = 0, unchanged = 0, skipped = 0, demoOffers = 0
        public var description: String {
            "imported \(imported), updated \(updated), unchanged \(unchanged), skipped \(skipped), demo offers \(demoOffers)"
        }
    }

    /// Imports (or updates in place) the file's shops; with `demoOffers`, each shop without one
    /// gets a made-up offer by its type, marked as a demo. Importing again changes nothing.
    public func importGeoJSON(at url: URL, demoOffers: Bool, now: Int64 = UnixMillis.now()) async throws -> Summary {
        let data = try Data(contentsOf: url)
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let features = root["features"] as? [[String: Any]] else {
            throw ShopImportError("\(url.path) is not a GeoJSON FeatureCollection")
        }
        var summary = Summary()
        var shops: [(osmID: String, name: String?, type: String, latitude: Double, longitude: Double, address: String?)] = []
        for feature in features {
            let properties = feature["properties"] as? [String: Any] ?? [:]
            let geometry = feature["geometry"] as? [String: Any]
            guard let osmID = (feature["id"] as? String) ?? (properties["@id"] as? String),
                  let type = ShopCatalogue.type(properties),
                  geometry?["type"] as? String == "Point",
                  let coordinates = geometry?["coordinates"] as? [Double], coordinates.count >= 2,
                  (-90...90).contains(coordinates[1]), (-180...180).contains(coordinates[0]),
                  osmID.count <= 64, type.count <= 64 else {
                summary.skipped += 1
                continue
            }
            let street = [properties["addr:housenumber"] as? String, properties["addr:street"] as? String].compactMap { $0 }
            let name = (properties["name"] as? String).map { String($0.prefix(200)) }
            shops.append((osmID, name, type, coordinates[1], coordinates[0], street.isEmpty ? nil : street.joined(separator: " ")))
        }
        let counted = summary
        let shopsToWrite = shops
        return try await database.transaction { sql in
            var result = counted
            for shop in shopsToWrite {
                let id = "osm-" + shop.osmID.replacingOccurrences(of: "/", with: "-")
                if let row = try await sql.select().columns("name", "shop_type", "latitude", "longitude", "address").from("shops")
                    .where("id", .equal, id).first() {
                    let same = try row.decode(column: "name", as: String?.self) == shop.name
                        && row.decode(column: "shop_type", as: String.self) == shop.type
                        && row.decode(column: "latitude", as: Double.self) == shop.latitude
                        && row.decode(column: "longitude", as: Double.self) == shop.longitude
                        && row.decode(column: "address", as: String?.self) == shop.address
                    if same {
                        result.unchanged += 1
                    } else {
                        try await sql.update("shops").set("name", to: shop.name).set("shop_type", to: shop.type)
                            .set("latitude", to: shop.latitude).set("longitude", to: shop.longitude).set("address", to: shop.address)
                            .set("updated_at", to: now).where("id", .equal, id).run()
                        result.updated += 1
                    }
                } else {
                    try await sql.insert(into: "shops").columns("id", "osm_id", "name", "shop_type", "latitude", "longitude", "address", "updated_at")
                        .values(SQLBind(id), SQLBind(shop.osmID), SQLBind(shop.name), SQLBind(shop.type), SQLBind(shop.latitude),
                                SQLBind(shop.longitude), SQLBind(shop.address), SQLBind(now))
                        .run()
                    result.imported += 1
                }
                guard demoOffers else { continue }
                let offerID = "demo-" + id
                guard try await sql.select().column("id").from("offers").where("id", .equal, offerID).first() == nil else { continue }
                let demo = ShopCatalogue.demoOffer(shop.type, name: shop.name)
                try await sql.insert(into: "offers")
                    .columns("id", "shop_id", "title", "description", "category", "discount_percent", "featured", "demo", "created_at")
                    .values(SQLBind(offerID), SQLBind(id), SQLBind(demo.title), SQLBind("A demo offer, made up by import-shops --demo-offers."),
                            SQLBind(ShopCatalogue.category(shop.type)), SQLBind(demo.discount), SQLBind(0), SQLBind(1), SQLBind(now))
                    .run()
                result.demoOffers += 1
            }
            return result
        }
    }
}

/// Why an import stopped.
public struct ShopImportError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
