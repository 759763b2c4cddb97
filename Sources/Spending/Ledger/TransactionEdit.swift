import EventualAPI

/// What an edit of a transaction changes, checked before the write: applied to the row as it
/// stands in the write's transaction, so that a field another device changed meanwhile (and the
/// edit does not touch) keeps its value. Nil is "not given".
struct TransactionEdit: Sendable {
    /// The account it goes to: its currency comes along.
    var account: SpendingAccount?
    var amountMinor: Int64?
    var category: String?
    var note: String?
    var occurredAt: Int64?
    var place: String?
    var position: GeoPosition?

    var isEmpty: Bool {
        account == nil && amountMinor == nil && category == nil && note == nil && occurredAt == nil && place == nil && position == nil
    }

    func apply(to transaction: inout SpendingTransaction) {
        if let account {
            transaction.accountId = account.id
            transaction.currency = account.currency
        }
        if let category { transaction.category = category }
        if let place { transaction.place = place }
        if let position {
            transaction.latitude = position.latitude
            transaction.longitude = position.longitude
        }
        applyShared(to: &transaction)
    }

    /// What both sides of a transfer between spaces share: the money, its note and its day.
    func applyShared(to transaction: inout SpendingTransaction) {
        if let amountMinor { transaction.amountMinor = amountMinor }
        if let note { transaction.note = note }
        if let occurredAt { transaction.occurredAt = occurredAt }
    }
}
