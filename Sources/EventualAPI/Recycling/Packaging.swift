/// One part of a product's packaging (a film, a tray, a box), as retailers declare them to
/// Open Food Facts.
public struct PackagingPart: Sendable, Hashable, Codable {
    public let material: PackagingMaterial
    /// "film", "tray", "box"... as the source named it, if it did.
    public let shape: String?
    /// Empty weight of all units of this part, in grams, if known.
    public let grams: Double?

    public init(material: PackagingMaterial, shape: String?, grams: Double?) {
        self.material = material
        self.shape = shape
        self.grams = grams
    }

    /// The trash type this part is, for the bin it goes in.
    public var trashType: TrashType { material.trashType }
}

/// What packaging is made of, coarse enough to pick a bin.
public enum PackagingMaterial: String, Sendable, CaseIterable, Codable {
    case plastic, polystyrene, paper, cardboard, metal, glass

    /// The trash type of an item made of this.
    public var trashType: TrashType {
        switch self {
        case .plastic: return .plasticBottle
        case .polystyrene: return .styrofoam
        case .paper: return .paperWaste
        case .cardboard: return .cardboardBox
        case .metal: return .aluminumCan
        case .glass: return .glassBottle
        }
    }

    /// Reads a material as Open Food Facts sources write it, in English or French
    /// ("Plastiques / PP - Polypropylène", "en:plastic", "Cellulosique / Carton plat"); nil when
    /// it names none of these.
    public init?(describing text: String) {
        let lower = text.lowercased()
        let rules: [(needles: [String], material: PackagingMaterial)] = [
            (["polystyr", "styro", "/ ps ", " ps -", "en:ps"], .polystyrene),
            (["carton", "cardboard", "corrugated"], .cardboard),
            (["papier", "paper", "cellulos"], .paper),
            (["verre", "glass"], .glass),
            (["métal", "metal", "alumin", "acier", "steel", "en:tin"], .metal),
            (["plasti", "en:pet", "hdpe", "ldpe", "polyprop", "polyéth", "polyeth", "polyam"], .plastic),
        ]
        guard let match = rules.first(where: { rule in rule.needles.contains { lower.contains($0) } }) else { return nil }
        self = match.material
    }
}

extension TrashType {
    /// The trash type of a packaged product: that of its heaviest part (parts of unknown weight
    /// count as light), or nil without parts.
    public init?(packaging parts: [PackagingPart]) {
        guard let main = parts.enumerated().max(by: { a, b in
            let (wa, wb) = (a.element.grams ?? 0, b.element.grams ?? 0)
            return wa != wb ? wa < wb : a.offset > b.offset
        }) else { return nil }
        self = main.element.trashType
    }
}
