/// SpendiQ's synced collections.
extension SyncCollections {
    /// Where money is kept: a wallet, a bank account, a card, savings, a person's own or shared
    /// in a space. Balances are computed from the opening balance and the transactions, never stored.
    public static let spendingAccounts = SyncCollection(name: "spending_accounts", app: .spendiQ, fields: [
        "name": SyncField(.string, nullable: false, maxLength: 100),
        /// `cash`, `bank`, `card` or `savings`.
        "kind": SyncField(.string, nullable: false, maxLength: 16),
        /// ISO 4217 code, e.g. EUR.
        "currency": SyncField(.string, nullable: false, maxLength: 3),
        "colour": SyncField(.string, maxLength: 32),
        /// Minor units of the currency (cents for EUR).
        "openingBalanceMinor": SyncField(.integer, nullable: false),
        "archived": SyncField(.boolean, nullable: false),
        /// Unix milliseconds.
        "createdAt": SyncField(.integer, nullable: false),
    ], scope: .space, rules: [
        .oneOf("kind", ["cash", "bank", "card", "savings"]),
    ])

    /// Money spent, received or moved between two accounts; in the space of its account.
    public static let spendingTransactions = SyncCollection(name: "spending_transactions", app: .spendiQ, fields: [
        "accountId": SyncField(.string, nullable: false, maxLength: 128),
        /// `expense`, `income` or `transfer`.
        "kind": SyncField(.string, nullable: false, maxLength: 16),
        /// Always above zero, in minor units of `currency`; the kind says which way it goes.
        "amountMinor": SyncField(.integer, nullable: false),
        "currency": SyncField(.string, nullable: false, maxLength: 3),
        "category": SyncField(.string, maxLength: 100),
        "note": SyncField(.string, maxLength: 500),
        /// Unix milliseconds of the moment the money moved.
        "occurredAt": SyncField(.integer, nullable: false),
        "place": SyncField(.string, maxLength: 200),
        "latitude": SyncField(.number),
        "longitude": SyncField(.number),
        /// Imported from a bank's export rather than typed.
        "automatic": SyncField(.boolean, nullable: false),
        /// For a transfer: the account the money went to.
        "toAccountId": SyncField(.string, maxLength: 128),
        /// A photo of the receipt: an attachment's reference (`sha256:<digest>`, `AttachmentReference`).
        "receipt": SyncField(.string, maxLength: 71),
        /// One side of a transfer between accounts in two spaces (a person's own and a shared
        /// one): `out` takes the money from `accountId`, `in` brings it to `toAccountId`; each side
        /// is in its account's space, and `linkId` names the other. Null: a whole transfer.
        "leg": SyncField(.string, maxLength: 3),
        "linkId": SyncField(.string, maxLength: 128),
    ], scope: .space, rules: [
        .oneOf("kind", ["expense", "income", "transfer"]),
        .oneOf("leg", ["in", "out"]),
        // NB: where the writer can see it, not only in the transaction's space: sharing an
        // account moves its transfers with it, so a transfer from a personal account lands in
        // the shared space still naming that account.
        .refersTo("accountId", collection: "spending_accounts", matching: ["currency": "currency"]),
        .refersTo("toAccountId", collection: "spending_accounts", matching: ["currency": "currency"]),
    ], deletionIsFinal: true)

    /// A person's budgets: at most `amountMinor` of `currency` per period, on one category or on
    /// everything. One record per period, category and currency (its id is made from them, so
    /// two devices that set the same budget offline set one record).
    public static let spendingLimits = SyncCollection(name: "spending_limits", app: .spendiQ, fields: [
        /// `daily`, `weekly` or `monthly`.
        "period": SyncField(.string, nullable: false, maxLength: 16),
        /// Empty for every category.
        "category": SyncField(.string, nullable: false, maxLength: 100),
        "currency": SyncField(.string, nullable: false, maxLength: 3),
        /// Minor units of `currency`, above zero.
        "amountMinor": SyncField(.integer, nullable: false),
    ])

    /// Every collection of SpendiQ.
    public static let spending = [spendingAccounts, spendingTransactions, spendingLimits]
}

extension AnalyticsApp {
    public static let spendiQ = AnalyticsApp(declaring: "spendiq")
}

extension EventualApp {
    /// SpendiQ: expenses and incomes, budgets, shared accounts. Its endpoints need a verified email.
    public static let spendiQ = EventualApp(id: .spendiQ, title: "SpendiQ", collections: SyncCollections.spending,
                                            needsVerifiedEmail: true, verifyCommand: "spendiq verify")
}
