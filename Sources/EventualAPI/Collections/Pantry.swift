/// Tracking My Pantry: its collections are declared in `Declarations/pantry.app.yaml`.
extension SyncCollections {
    /// The items of a pantry: a person's own, or a household's.
    public static let pantryItems = EventualApp.pantry.collection("pantry_items")

    /// Every collection of the pantry.
    public static let pantry = EventualApp.pantry.collections
}

extension AnalyticsApp {
    public static let pantry = AnalyticsApp(declaring: "pantry")
}

extension EventualApp {
    /// Tracking My Pantry: a shared barcode knowledge base and a private or household pantry.
    public static let pantry = BuiltInApps.declared("pantry")
}
