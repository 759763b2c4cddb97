/// What a recycling point accepts: one fixed vocabulary, onto which OpenStreetMap's many
/// `recycling:*=yes` keys map.
public enum PointMaterial: String, Sendable, CaseIterable, Codable, Comparable {
    case plastic, glass, paper, cardboard, metal, organic, batteries, electronics, textiles, oil, hazardous, general

    /// The material an OpenStreetMap `recycling:<key>` stands for, or nil for one outside the
    /// vocabulary (books, toys, ...).
    public init?(osmKey key: String) {
        guard let material = Self.osmKeys[key] else { return nil }
        self = material
    }

    public static func < (lhs: PointMaterial, rhs: PointMaterial) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// From the keys in use on OpenStreetMap's wiki page for `amenity=recycling`.
    private static let osmKeys: [String: PointMaterial] = [
        "plastic": .plastic, "plastic_bottles": .plastic, "plastic_packaging": .plastic, "pet_drink_bottles": .plastic,
        "glass": .glass, "glass_bottles": .glass, "bottles": .glass,
        "paper": .paper, "newspaper": .paper, "magazines": .paper, "paper_packaging": .paper,
        "cardboard": .cardboard, "cartons": .cardboard, "beverage_cartons": .cardboard,
        "cans": .metal, "scrap_metal": .metal, "aluminium": .metal, "metal": .metal, "tins": .metal,
        "organic": .organic, "green_waste": .organic, "food_waste": .organic, "compost": .organic,
        "batteries": .batteries, "car_batteries": .batteries,
        "electrical_appliances": .electronics, "small_appliances": .electronics,
        "small_electrical_appliances": .electronics, "computers": .electronics, "mobile_phones": .electronics,
        "low_energy_bulbs": .electronics, "fluorescent_tubes": .electronics, "electronics": .electronics,
        "clothes": .textiles, "shoes": .textiles, "textiles": .textiles, "household_textiles": .textiles,
        "cooking_oil": .oil, "engine_oil": .oil, "oil": .oil,
        "hazardous_waste": .hazardous, "paint": .hazardous, "chemicals": .hazardous, "medicines": .hazardous,
        "waste": .general, "trash": .general, "general": .general,
    ]
}
