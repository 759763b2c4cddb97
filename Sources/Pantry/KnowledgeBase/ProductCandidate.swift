import Foundation
import EventualAPI
import EventualKit

/// A product the knowledge base (or this user, not yet sent) knows for a barcode.
public struct ProductCandidate: Sendable, Equatable, Codable {
    /// The server's id; nil for a product this user created that has not reached the server yet.
    public let id: String?
    /// This device's id of a product the user created.
    public let localId: String?
    public let name: String
    public let description: String?
    /// The sum of every rating, as the server last said (0 for the user's unsent products).
    public let score: Int
    /// Created by this user on this device.
    public let isMine: Bool

    /// Not yet on the server.
    public var isPending: Bool { id == nil }

    /// Whether two product names are the same to a person: case and surrounding spaces aside.
    public static func sameName(_ first: String, _ second: String) -> Bool {
        first.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == second.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }
}

/// What a look-up found, and where it came from.
public struct ProductLookup: Sendable, Equatable {
    public let barcode: GTIN
    /// Best score first.
    public let candidates: [ProductCandidate]
    /// Network or the saved copy.
    public let source: CacheSource
    /// Unix milliseconds when the server last sent this list (nil: only the user's own products).
    public let fetchedAt: Int64?
}

/// The knowledge base's answer as the device saves it.
struct SavedProducts: Codable, Sendable {
    struct Product: Codable, Sendable {
        let id: String
        let name: String
        let description: String?
        let score: Int
    }

    let products: [Product]
}
