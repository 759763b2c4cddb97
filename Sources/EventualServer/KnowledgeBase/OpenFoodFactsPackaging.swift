import EventualAPI
import Foundation

/// The parts of a product's packaging, read from an Open Food Facts export's packaging columns:
/// `packaging_tags` ("en:glass,en:bottle,en:metal-cap"), or the free text of `packaging`
/// ("Verre, Bouteille") when there are no tags.
///
/// The tags are a flat list of materials and shapes, not parts: each material named becomes
/// one part, once; a shape named in the same tag ("en:glass-jar", "en:pet-bottle") is that
/// part's, and a shape named alone ("en:bottle") is given only to a packaging of one material
/// (with two materials it could be either's). A can is metal. Tags that name no material
/// ("en:bag", "en:unfrozen") add no part: no bin is named from a guess.
enum OpenFoodFactsPackaging {
    static func parts(tags: String, text: String) -> [PackagingPart] {
        let source = tags.trimmingCharacters(in: .whitespaces).isEmpty ? text : tags
        var parts: [PackagingPart] = []
        var loneShapes: [String] = []
        for tag in source.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() }) where !tag.isEmpty {
            let words = Self.words(of: tag)
            let shape = words.last.flatMap { shapes.contains($0) ? $0 : nil }
            guard let material = PackagingMaterial(describing: tag) ?? Self.material(of: words) else {
                if let shape { loneShapes.append(shape) }
                continue
            }
            if let index = parts.firstIndex(where: { $0.material == material }) {
                if parts[index].shape == nil, let shape { parts[index] = PackagingPart(material: material, shape: shape, grams: nil) }
            } else {
                parts.append(PackagingPart(material: material, shape: shape, grams: nil))
            }
        }
        if parts.count == 1, parts[0].shape == nil, Set(loneShapes).count == 1 {
            parts[0] = PackagingPart(material: parts[0].material, shape: loneShapes[0], grams: nil)
        }
        return parts
    }

    /// The words of a tag without its language prefix: "en:glass-jar" is ["glass", "jar"].
    private static func words(of tag: String) -> [String] {
        var body = Substring(tag)
        if let colon = body.firstIndex(of: ":"), body.distance(from: body.startIndex, to: colon) <= 3 { body = body[body.index(after: colon)...] }
        return body.split(whereSeparator: { $0 == "-" || $0 == " " || $0 == "_" }).map(String.init)
    }

    /// Materials `PackagingMaterial(describing:)` does not know, by whole word.
    private static func material(of words: [String]) -> PackagingMaterial? {
        for word in words {
            switch word {
            case "card", "paperboard": return .cardboard
            case "cristal", "vidrio", "glas", "vetro": return .glass
            case "plástico", "plastico", "plástica": return .plastic
            case "can", "cans", "tin", "canette", "dose", "lata": return .metal
            default: continue
            }
        }
        return nil
    }

    /// Shapes a tag may end with, in Open Food Facts' English tags.
    private static let shapes: Set<String> = [
        "bottle", "jar", "can", "bag", "box", "tray", "lid", "cap", "film", "sleeve", "bucket", "pot", "tub", "wrapper", "pouch",
        "sachet", "container", "cup", "label", "tube", "brick", "capsule", "blister", "net",
    ]
}
