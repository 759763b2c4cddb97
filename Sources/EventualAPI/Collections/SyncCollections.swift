/// Every collection the server accepts: each app's, declared in that app's own file here.
public enum SyncCollections {
    /// Every registered collection, by name.
    public static let all: [String: SyncCollection] = Dictionary(
        uniqueKeysWithValues: (pantry + spending).map { ($0.name, $0) }
    )
}
