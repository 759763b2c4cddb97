/// Tracking My Pantry's synced collections.
extension SyncCollections {
    /// The items of a pantry: a person's own, or a household's.
    public static let pantryItems = SyncCollection(name: "pantry_items", app: .pantry, fields: [
        "barcode": SyncField(.string, maxLength: 14),
        "productId": SyncField(.string, maxLength: 64),
        "name": SyncField(.string, nullable: false, maxLength: 200),
        "description": SyncField(.string, maxLength: 2000),
        /// Consumed on two phones at once, both consumptions count.
        "quantity": SyncField(.counter, nullable: false),
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
        /// A photo of the item: an attachment's reference (`sha256:<digest>`, `AttachmentReference`).
        "photo": SyncField(.string, maxLength: 71),
    ], scope: .space, rules: [
        .notBelow("quantity", 0),
        .oneOf("status", ["inPantry", "consumed", "thrownAway"]),
        // NB: after the closed set: a status no item may have is told as such, not as set aside.
        .editableWhile("status", ["inPantry"]),
    ])

    /// Every collection of the pantry.
    public static let pantry = [pantryItems]
}

extension AnalyticsApp {
    public static let pantry = AnalyticsApp(declaring: "pantry")
}

extension EventualApp {
    /// Tracking My Pantry: a shared barcode knowledge base and a private or household pantry.
    public static let pantry = EventualApp(id: .pantry, title: "Tracking My Pantry", collections: SyncCollections.pantry)
}
