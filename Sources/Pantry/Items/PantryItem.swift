import EventualAPI
import EventualKit
import Foundation
import GRDB

/// One thing in (or once in) the pantry: a row of `pantry_items`, synced as the `pantry_items`
/// collection. Its properties are the collection's fields (`SyncRecord`): it is read from its row
/// and written as a value (`PantrySchema.items`).
public struct PantryItem: SyncRecord, Equatable, Identifiable {
    public static let collection = SyncCollections.pantryItems

    /// Where an item is in its life.
    public enum Status: String, Sendable, Codable, DatabaseValueConvertible {
        case inPantry, consumed, thrownAway

        /// A status this version does not know (a newer app's) is read as in the pantry.
        public init(from decoder: any Decoder) throws {
            self = Status(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .inPantry
        }

        public static func fromDatabaseValue(_ value: DatabaseValue) -> Status? {
            String.fromDatabaseValue(value).map { Status(rawValue: $0) ?? .inPantry }
        }
    }

    public var id: String
    public var barcode: String?
    public var productId: String?
    public var name: String
    public var description: String?
    public var quantity: Double
    public var unit: String?
    public var category: String?
    public var expiresOn: Day?
    /// Unix milliseconds.
    public var boughtAt: Int64
    public var place: String?
    public var latitude: Double?
    public var longitude: Double?
    public var status: Status
    /// Unix milliseconds of the last consume or edit.
    public var touchedAt: Int64?
    /// Unix milliseconds when the item left the pantry.
    public var finishedAt: Int64?
    /// The shared space (a household) the item is in; nil: the person's own.
    public var space: String?
    /// The username of whoever last changed it, as the server said; nil while this device's own change waits.
    public var changedBy: String?
    /// Its photo: an attachment's reference (`sha256:<digest>`); nil: none.
    public var photo: String? = nil

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case id, barcode, productId, name, description, quantity, unit, category, expiresOn, boughtAt, place, latitude, longitude
        case status, touchedAt, finishedAt, photo
        /// The row's columns the engine writes (see `TableMirror`): not fields, never sent.
        case space = "space_id", changedBy = "changed_by"
    }

    init(id: String, details: ItemDetails, barcode: String?, productId: String?, boughtAt: Int64, space: String? = nil) {
        self.id = id
        self.barcode = barcode
        self.productId = productId
        name = details.name ?? ""
        description = details.description
        quantity = details.quantity ?? 1
        unit = details.unit
        category = details.category
        expiresOn = details.expiresOn
        self.boughtAt = boughtAt
        place = details.place
        latitude = details.position?.latitude
        longitude = details.position?.longitude
        status = .inPantry
        touchedAt = nil
        finishedAt = nil
        self.space = space
        changedBy = nil
    }

    /// The finest quantity a person means (a gram of a kilogram). Sums of decimals drift below
    /// it (0.3 - 0.1 is 0.19999999999999998), so a quantity is shown, and is zero, to this step.
    public static let quantityStep = 1 / stepsPerUnit
    private static let stepsPerUnit = 1000.0

    /// `quantity` to the nearest `quantityStep`: what a person is shown.
    public static func rounded(_ quantity: Double) -> Double {
        // NB: n / 1000 is the double nearest the decimal, where n * 0.001 may not be; beyond 1e12
        // (and for inf and nan) a double has no thousandths to round.
        guard quantity.isFinite, abs(quantity) < 1e12 else { return quantity }
        return (quantity * stepsPerUnit).rounded() / stepsPerUnit
    }

    /// Whether `quantity` is nothing, as a person would see it.
    static func isNothing(_ quantity: Double) -> Bool { rounded(quantity) <= 0 }
}

/// What a person can say about an item when adding or editing it. Nil means "not given".
public struct ItemDetails: Sendable, Equatable {
    public var name: String?
    public var description: String?
    public var quantity: Double?
    public var unit: String?
    public var category: String?
    public var expiresOn: Day?
    public var place: String?
    public var position: GeoPosition?

    public init(name: String? = nil, description: String? = nil, quantity: Double? = nil, unit: String? = nil,
                category: String? = nil, expiresOn: Day? = nil, place: String? = nil, position: GeoPosition? = nil) {
        self.name = name
        self.description = description
        self.quantity = quantity
        self.unit = unit
        self.category = category
        self.expiresOn = expiresOn
        self.place = place
        self.position = position
    }

    /// The largest quantity an item may have: beyond it a number is a typing mistake.
    public static let maxQuantity: Double = 1_000_000

    /// Refuses what the server would refuse, so a mistake shows now rather than at sync.
    func validate() throws(PantryError) {
        if let name, name.trimmingCharacters(in: .whitespaces).isEmpty { throw .invalidField("A name cannot be empty") }
        for (field, value) in [("name", name), ("unit", unit), ("category", category), ("place", place), ("description", description)] {
            let limit = SyncCollections.pantryItems.fields[field]?.maxLength ?? .max
            guard let value else { continue }
            if value.count > limit { throw .invalidField("The \(field) is longer than \(limit) characters") }
            let allowed: Set<Unicode.Scalar> = field == "description" ? ["\n", "\t"] : []
            if let character = ControlCharacters.first(in: value, allowing: allowed) {
                throw .invalidField("The \(field) contains \(character): type it without one")
            }
        }
        if let quantity { try Self.checkQuantity(quantity) }
        if let position, !position.isValid { throw .invalidCoordinates(position.description) }
    }

    /// A quantity a person can mean: at least `PantryItem.quantityStep`, at most `maxQuantity`.
    public static func checkQuantity(_ quantity: Double) throws(PantryError) {
        guard !PantryItem.isNothing(quantity), quantity <= maxQuantity else { throw .invalidQuantity("\(quantity)") }
    }

    /// The quantity a person typed ("0.5", " 2 "); refused in the words they typed.
    public static func quantity(typed text: String) throws(PantryError) -> Double {
        guard let quantity = Double(text.trimmingCharacters(in: .whitespaces)) else { throw .invalidQuantity(text) }
        do { try checkQuantity(quantity) } catch { throw .invalidQuantity(text) }
        // NB: quantities count in thousandths: 0.0015 would be kept as typed and shown as 0.002.
        guard abs(PantryItem.rounded(quantity) - quantity) <= quantity.ulp * 8 else { throw .invalidQuantity(text) }
        return quantity
    }
}
