/// How much one user may store. Past a quota a write answers 413 with a message saying which.
public struct Quotas: Sendable, Equatable {
    /// Synced records (a deleted record keeps its tombstone and still counts).
    public var syncRecordsPerUser = 100_000
    /// Products created in the knowledge base. With the 1 MiB body cap this also bounds a user's
    /// bytes there: at most this many images of at most 1 MiB each.
    public var productsPerUser = 5_000

    public init() {}
}
