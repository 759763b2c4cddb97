/// Every collection the server accepts: each app's, declared in that app's own file here and
/// registered with it (`EventualApp.collections`).
public enum SyncCollections {
    /// Every registered collection, by name.
    public static let all: [String: SyncCollection] = Dictionary(
        uniqueKeysWithValues: EventualApp.all.flatMap(\.collections).map { ($0.name, $0) }
    )
}
