/// How much one user may store. A write past a quota is refused (`Refusal.quotaExceeded`) with a message saying which.
public struct Quotas: Sendable, Equatable {
    /// Synced records (a deleted record keeps its tombstone and still counts).
    public var syncRecordsPerUser = 100_000
    /// Products created in the knowledge base.
    public var productsPerUser = 5_000
    /// Bytes stored: synced records' values, products' text and images and usage events, in UTF-8 (see StorageUsage).
    public var bytesPerUser: Int64 = 100 * 1_048_576
    /// Usage events filed in any 24 hours (by the server's clock); past it refused until the oldest hour passes.
    public var eventsPerUserPerDay = 10_000

    public init() {}
}
