/// Chores' synced collection: the example app (`Examples/Chores`).
extension SyncCollections {
    /// A household's chores: a person's own, or shared in a household's space.
    public static let chores = SyncCollection(name: "chores", app: .chores, fields: [
        "title": SyncField(.string, nullable: false, maxLength: 200),
        /// The username of who is to do it; null for anyone.
        "assignee": SyncField(.string, maxLength: 64),
        "due": SyncField(.date),
        "done": SyncField(.boolean, nullable: false),
        /// Unix milliseconds.
        "createdAt": SyncField(.integer, nullable: false),
    ], scope: .space)
}

extension AnalyticsApp {
    public static let chores = AnalyticsApp(declaring: "chores")
}

extension EventualApp {
    /// Chores: a household's shared chore list, the example of an app on the platform.
    public static let chores = EventualApp(id: .chores, title: "Chores", collections: [SyncCollections.chores])
}
