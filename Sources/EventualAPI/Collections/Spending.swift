/// SpendiQ: its collections are declared in `Declarations/spendiq.app.yaml`.
extension SyncCollections {
    /// Where money is kept: a wallet, a bank account, a card, savings.
    public static let spendingAccounts = EventualApp.spendiQ.collection("spending_accounts")
    /// Money spent, received or moved between two accounts; in the space of its account.
    public static let spendingTransactions = EventualApp.spendiQ.collection("spending_transactions")
    /// A person's budgets.
    public static let spendingLimits = EventualApp.spendiQ.collection("spending_limits")

    /// Every collection of SpendiQ.
    public static let spending = EventualApp.spendiQ.collections
}

extension AnalyticsApp {
    public static let spendiQ = AnalyticsApp(declaring: "spendiq")
}

extension EventualApp {
    /// SpendiQ: expenses and incomes, budgets, shared accounts. Its endpoints need a verified email.
    public static let spendiQ = BuiltInApps.declared("spendiq")
}
