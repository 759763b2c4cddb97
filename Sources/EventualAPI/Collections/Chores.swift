/// Chores, the example app (`Examples/Chores`): its collection is declared in
/// `Declarations/chores.app.yaml`.
extension SyncCollections {
    /// A household's chores: a person's own, or shared in a household's space.
    public static let chores = EventualApp.chores.collection("chores")
}

extension AnalyticsApp {
    public static let chores = AnalyticsApp(declaring: "chores")
}

extension EventualApp {
    /// Chores: a household's shared chore list, the example of an app on the platform.
    public static let chores = BuiltInApps.declared("chores")
}
