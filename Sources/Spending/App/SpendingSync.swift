import EventualKit

/// What SpendiQ syncs, for another front end of it (a benchmark, a widget) that opens a person's
/// store without the whole app: its tables, its mirrors and its subscriptions.
public enum SpendingSync {
    public static var migrations: [LocalMigration] { SpendingSchema.migrations }
    public static var mirrors: [any SyncedCollectionStore] { [SpendingSchema.accounts.mirror, SpendingSchema.transactions.mirror, SpendingSchema.limits.mirror] }
    public static var subscriptions: [SyncSubscription] { UserSpending.subscriptions }
}
