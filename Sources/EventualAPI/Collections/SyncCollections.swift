/// The collections of the apps built into this repository (`EventualApp.builtIn`). The server
/// accepts those of the apps deployed to its database (`AppCatalog`), which include these.
public enum SyncCollections {
    /// Every built-in collection, by name.
    public static let all: [String: SyncCollection] = Dictionary(
        uniqueKeysWithValues: EventualApp.builtIn.flatMap(\.collections).map { ($0.name, $0) }
    )
}
