/// The kinds of value a field of a synced record may hold on the wire.
public enum SyncFieldType: String, Sendable, Hashable {
    /// A JSON string.
    case string
    /// A JSON integer (no fraction).
    case integer
    /// A JSON number.
    case number
    /// A JSON boolean.
    case boolean
    /// A calendar day as a `YYYY-MM-DD` string.
    case date
}

/// One field of a synced collection.
public struct SyncField: Sendable, Hashable {
    public let type: SyncFieldType
    /// Whether `null` is accepted (it clears the field).
    public let nullable: Bool
    /// For strings: the longest value accepted, in characters.
    public let maxLength: Int?

    public init(_ type: SyncFieldType, nullable: Bool = true, maxLength: Int? = nil) {
        self.type = type
        self.nullable = nullable
        self.maxLength = maxLength
    }
}

/// A collection of user-owned records that the sync endpoints carry, with its fields. Both the
/// server (which validates pushes against it) and the apps (which write it) read it from here,
/// so the two cannot drift.
public struct SyncCollection: Sendable, Hashable {
    public let name: String
    public let fields: [String: SyncField]

    public init(name: String, fields: [String: SyncField]) {
        self.name = name
        self.fields = fields
    }
}

/// Every collection the server accepts. An app adds its collections here.
public enum SyncCollections {
    /// Tracking My Pantry: the items of a user's pantry.
    public static let pantryItems = SyncCollection(name: "pantry_items", fields: [
        "barcode": SyncField(.string, maxLength: 14),
        "productId": SyncField(.string, maxLength: 64),
        "name": SyncField(.string, nullable: false, maxLength: 200),
        "description": SyncField(.string, maxLength: 2000),
        "quantity": SyncField(.number, nullable: false),
        "unit": SyncField(.string, maxLength: 32),
        "category": SyncField(.string, maxLength: 100),
        "expiresOn": SyncField(.date),
        /// Unix milliseconds.
        "boughtAt": SyncField(.integer, nullable: false),
        "place": SyncField(.string, maxLength: 200),
        "latitude": SyncField(.number),
        "longitude": SyncField(.number),
        /// `inPantry`, `consumed` or `thrownAway`.
        "status": SyncField(.string, nullable: false, maxLength: 16),
        /// Unix milliseconds of the last change a person made (consume, edit).
        "touchedAt": SyncField(.integer),
        /// Unix milliseconds when the item left the pantry.
        "finishedAt": SyncField(.integer),
    ])

    /// Every registered collection, by name.
    public static let all: [String: SyncCollection] = Dictionary(
        uniqueKeysWithValues: [pantryItems].map { ($0.name, $0) }
    )
}
