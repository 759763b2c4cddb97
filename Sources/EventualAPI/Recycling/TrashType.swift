/// The 15 kinds of trash the original SustainU app classified photos into.
public enum TrashType: String, Sendable, CaseIterable, Codable {
    case plasticBottle = "Plastic Bottle"
    case aluminumCan = "Aluminum Can"
    case glassBottle = "Glass Bottle"
    case paperWaste = "Paper Waste"
    case cardboardBox = "Cardboard Box"
    case foodScrap = "Food Scrap"
    case yardWaste = "Yard Waste"
    case electronicWaste = "Electronic Waste"
    case styrofoam = "Styrofoam"
    case battery = "Battery"
    case hazardousWaste = "Hazardous Waste"
    case textileWaste = "Textile Waste"
    case medicalWaste = "Medical Waste"
    case oilContainer = "Oil Container"
    case paintCan = "Paint Can"

    /// Where it goes on campus.
    public var bin: Bin {
        switch self {
        case .paperWaste, .cardboardBox: return .grey
        case .plasticBottle, .aluminumCan, .glassBottle: return .blue
        case .foodScrap, .yardWaste: return .green
        case .styrofoam: return .yellow
        case .electronicWaste: return .special(.electronics)
        case .battery: return .special(.batteries)
        case .hazardousWaste, .medicalWaste, .paintCan: return .special(.hazardous)
        case .textileWaste: return .special(.textiles)
        case .oilContainer: return .special(.oil)
        }
    }

    /// The trash type named in a free-text answer (a vision model's), or nil when the answer
    /// names none or more than one of them. Case, spacing, punctuation and a plural "s" are
    /// forgiven; anything else is not a guess this code makes.
    public init?(answer: String) {
        let words = Self.normalise(answer)
        guard !words.isEmpty else { return nil }
        var found: [TrashType] = []
        for type in TrashType.allCases {
            let name = Self.normalise(type.rawValue)
            if words == name || words == name + "s" || (" " + words + " ").contains(" " + name + " ") || (" " + words + " ").contains(" " + name + "s ") {
                found.append(type)
            }
        }
        guard found.count == 1 else { return nil }
        self = found[0]
    }

    private static func normalise(_ text: String) -> String {
        let letters = text.lowercased().unicodeScalars.map { ("a"..."z").contains($0) || ("0"..."9").contains($0) ? Character($0) : " " }
        return String(letters).split(separator: " ").joined(separator: " ")
    }
}

/// A bin on campus, by the colours of its lids.
public enum Bin: Sendable, Hashable {
    /// Paper and cardboard.
    case grey
    /// Glass, plastic and metal containers.
    case blue
    /// Organic waste.
    case green
    /// Everything else.
    case yellow
    /// Not for a campus bin: the nearest recycling point that accepts this material.
    case special(PointMaterial)

    /// "grey", "blue", "green", "yellow" or "special".
    public var colour: String {
        switch self {
        case .grey: return "grey"
        case .blue: return "blue"
        case .green: return "green"
        case .yellow: return "yellow"
        case .special: return "special"
        }
    }

    /// What a person is told: "the blue bin (glass, plastic, metal)".
    public var label: String {
        switch self {
        case .grey: return "the grey bin (paper and cardboard)"
        case .blue: return "the blue bin (glass, plastic and metal)"
        case .green: return "the green bin (organic)"
        case .yellow: return "the yellow bin (everything else)"
        case .special(let material): return "a recycling point that accepts \(material.rawValue)"
        }
    }
}
