import EventualAPI
import EventualKit
import Foundation
import GRDB

/// What a person says about a transaction when adding or editing it. Nil means "not given".
public struct TransactionDetails: Sendable, Equatable {
    public var amount: String?
    public var account: String?
    public var category: String?
    public var note: String?
    /// As typed (`2026-11-20`, `yesterday`); parsed in the person's time zone.
    public var date: String?
    public var place: String?
    public var position: GeoPosition?

    public init(amount: String? = nil, account: String? = nil, category: String? = nil, note: String? = nil,
                date: String? = nil, place: String? = nil, position: GeoPosition? = nil) {
        self.amount = amount
        self.account = account
        self.category = category
        self.note = note
        self.date = date
        self.place = place
        self.position = position
    }
}

/// Which transactions a list shows.
public struct TransactionQuery: Sendable, Equatable {
    public var days: Int?
    public var account: String?
    public var category: String?
    public var limit: Int?

    public init(days: Int? = nil, account: String? = nil, category: String? = nil, limit: Int? = nil) {
        self.days = days
        self.account = account
        self.category = category
        self.limit = limit
    }
}

/// A write and the budgets it went over.
public struct Recorded: Sendable, Equatable {
    public let transaction: SpendingTransaction
    public let warnings: [LimitWarning]
}

/// The user's accounts and transactions in their database: writes named after what a person
/// does, each applied and queued for the server in one transaction; balances computed.
public struct Ledger: Sendable {
    let store: LocalStore
    let configuration: SpendingConfiguration
    /// The spaces the person is in, for their role in each; nil for a ledger alone (no one shares with it).
    let spaces: Spaces?
    /// The engine's clock, which corrects this device's when it is known to be off; nil for a ledger alone.
    let serverClock: DeviceClock?

    init(store: LocalStore, configuration: SpendingConfiguration, spaces: Spaces? = nil, serverClock: DeviceClock? = nil) {
        self.store = store
        self.configuration = configuration
        self.spaces = spaces
        self.serverClock = serverClock
    }

    /// Now, as records are stamped with it: by the server's time when this device's clock is
    /// known to be off (a phone an hour fast records an expense now, not in an hour, for everyone).
    var now: Int64 {
        let now = configuration.clock()
        return serverClock?.corrected(now) ?? now
    }
    var limits: Limits { Limits(store: store, configuration: configuration) }

    // MARK: - Accounts

    /// Opens an account.
    @discardableResult
    public func addAccount(name: String, kind: AccountKind = .cash, currency: String, colour: String? = nil,
                           openingBalance: String? = nil) async throws -> SpendingAccount {
        let code = currency.uppercased()
        guard Currency.isKnown(code) else { throw SpendingError.invalidCurrency(currency) }
        let name = try Self.text(name, field: "name", collection: SyncCollections.spendingAccounts, required: true)!
        let colour = try Self.colour(colour)
        let opening = try openingBalance.map { text throws(SpendingError) in try AmountText.parseSigned(text, currency: code) } ?? 0
        guard try findAccounts(name).filter({ $0.name.lowercased() == name.lowercased() }).isEmpty else {
            throw SpendingError.accountExists(name)
        }
        let account = SpendingAccount(id: UUIDv7.make(), name: name, kind: kind, currency: code, colour: colour,
                                      openingBalanceMinor: opening, createdAt: now)
        try await store.write { tx in try SpendingSchema.accounts.insert(account, in: tx) }
        return account
    }

    /// Renames, recolours or changes the kind of an account.
    @discardableResult
    public func editAccount(_ reference: String, name: String? = nil, kind: AccountKind? = nil, colour: String? = nil) async throws -> SpendingAccount {
        let account = try self.account(reference, allowArchived: true)
        try checkWritable(account)
        // NB: a name of nothing or of spaces would sync an account nobody can name again.
        let newName = try name.map({ text throws(SpendingError) in try Self.text(text, field: "name", collection: SyncCollections.spendingAccounts, required: true)! })
        if let newName, newName.lowercased() != account.name.lowercased(),
           try findAccounts(newName).contains(where: { $0.name.lowercased() == newName.lowercased() }) {
            throw SpendingError.accountExists(newName)
        }
        let newColour = try Self.text(colour, field: "colour", collection: SyncCollections.spendingAccounts).map { text throws(SpendingError) in
            text.isEmpty ? nil : try Self.colour(text)
        }
        guard newName != nil || kind != nil || newColour != nil else { throw SpendingError.nothingToChange(fields: ["name", "kind", "colour"]) }
        try await store.write { tx in
            try SpendingSchema.accounts.update(account.id, in: tx) { account in
                if let newName { account.name = newName }
                if let kind { account.kind = kind }
                if let newColour { account.colour = newColour }
            }
        }
        return try self.account(account.id, allowArchived: true)
    }

    /// Archives an account: it leaves the lists and the dashboard; its transactions stay.
    @discardableResult
    public func archiveAccount(_ reference: String) async throws -> SpendingAccount {
        var account = try self.account(reference, allowArchived: true)
        try checkWritable(account)
        try await store.write { [id = account.id] tx in try SpendingSchema.accounts.update(id, in: tx) { $0.archived = true } }
        account.archived = true
        return account
    }

    /// Every account, archived ones too when asked, by name.
    public func accounts(includeArchived: Bool = false) throws -> [SpendingAccount] {
        try store.reader.read { db in
            try SpendingAccount.fetchAll(db, sql: "SELECT * FROM spending_accounts \(includeArchived ? "" : "WHERE archived = 0") ORDER BY name COLLATE NOCASE")
        }
    }

    /// The account named `reference` (any case), or whose id is or ends with it.
    public func account(_ reference: String, allowArchived: Bool = false) throws -> SpendingAccount {
        guard !reference.trimmingCharacters(in: .whitespaces).isEmpty else { throw SpendingError.invalidField("Which account? Give its name or its id") }
        let matches = try findAccounts(reference)
        let exact = matches.filter { $0.name.lowercased() == reference.lowercased() || $0.id == reference }
        let candidates = exact.isEmpty ? matches : exact
        let live = candidates.filter { !$0.archived }
        let chosen = live.count == 1 ? live : candidates
        guard chosen.count == 1 else {
            throw chosen.isEmpty ? SpendingError.noSuchAccount(reference)
                : SpendingError.ambiguousAccount(reference, ids: chosen.map { String($0.id.suffix(Self.shownIDLength)) }.sorted())
        }
        guard allowArchived || !chosen[0].archived else { throw SpendingError.archivedAccount(chosen[0].name) }
        return chosen[0]
    }

    private func findAccounts(_ reference: String) throws -> [SpendingAccount] {
        let trimmed = reference.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return [] }
        return try store.reader.read { db in
            try SpendingAccount.fetchAll(db, sql: """
                SELECT * FROM spending_accounts
                WHERE lower(name) = lower(?1) OR id = ?1 OR (length(?1) >= \(Self.shownIDLength) AND substr(id, -length(?1)) = lower(?1))
                """, arguments: [trimmed])
        }
    }

    // MARK: - Transactions

    /// Records money spent or received. The write prints any budget it went over.
    @discardableResult
    /// `receipt`: a photo of the receipt (`Attachments.prepare(fileAt:)`), referred to by the
    /// transaction and its upload queued in the same local transaction.
    public func record(_ kind: TransactionKind, _ details: TransactionDetails, automatic: Bool = false,
                       receipt: PreparedAttachment? = nil) async throws -> Recorded {
        precondition(kind != .transfer, "transfers go through transfer(_:from:to:)")
        guard let accountName = details.account else { throw SpendingError.whichAccount(ofFile: false) }
        let account = try self.account(accountName)
        try checkWritable(account)
        guard let amountText = details.amount else { throw SpendingError.invalidAmount("") }
        let amount = try AmountText.parse(amountText, currency: account.currency)
        let transaction = SpendingTransaction(
            id: UUIDv7.make(), accountId: account.id, kind: kind, amountMinor: amount, currency: account.currency,
            category: try category(details.category, default: kind == .income ? "income" : "other"),
            note: try Self.text(details.note, field: "note", collection: SyncCollections.spendingTransactions),
            occurredAt: try details.date.map { text throws(SpendingError) in try DateText.parse(text, now: now, calendar: configuration.calendar) } ?? now,
            place: try Self.text(details.place, field: "place", collection: SyncCollections.spendingTransactions),
            position: try Self.position(details.position), automatic: automatic, toAccountId: nil)
        try await store.write { tx in try Self.insert(transaction, receipt: receipt, in: tx) }
        return Recorded(transaction: transaction, warnings: try limits.check(after: transaction))
    }

    /// Moves money between two accounts of one currency. Between accounts of two spaces (your
    /// own and a shared one), it is two linked records, one in each account's space (see
    /// `TransferLeg`), shown as one transfer; the out side is returned.
    @discardableResult
    public func transfer(_ amountText: String, from: String, to: String, note: String? = nil, date: String? = nil) async throws -> SpendingTransaction {
        let source = try account(from), target = try account(to)
        guard source.id != target.id else { throw SpendingError.transferToItself }
        guard source.currency == target.currency else { throw SpendingError.transferCurrencies(from: source.currency, to: target.currency) }
        try checkWritable(source)
        try checkWritable(target)
        var transaction = SpendingTransaction(
            id: UUIDv7.make(), accountId: source.id, kind: .transfer, amountMinor: try AmountText.parse(amountText, currency: source.currency),
            currency: source.currency, category: "transfer",
            note: try Self.text(note, field: "note", collection: SyncCollections.spendingTransactions),
            occurredAt: try date.map { text throws(SpendingError) in try DateText.parse(text, now: now, calendar: configuration.calendar) } ?? now,
            place: nil, position: nil, automatic: false, toAccountId: target.id)
        // NB: one record in one space would leave the other space's members a balance that is
        // not yours, and take money from your own account the day you leave the shared one.
        guard source.space == target.space else {
            transaction.leg = .out
            transaction.linkId = UUIDv7.make()
            let other = transaction.otherLeg(id: transaction.linkId!)
            try await store.write { [transaction] tx in
                try SpendingSchema.transactions.insert(transaction, space: source.space, in: tx)
                try SpendingSchema.transactions.insert(other, space: target.space, in: tx)
            }
            return transaction
        }
        try await store.write { [transaction] tx in try Self.insert(transaction, in: tx) }
        return transaction
    }

    /// The other side of a transfer between spaces, when this device holds it.
    func otherLeg(of transaction: SpendingTransaction) throws -> SpendingTransaction? {
        guard transaction.leg != nil, let link = transaction.linkId else { return nil }
        return try store.reader.read { db in
            try SpendingTransaction.fetchOne(db, sql: "SELECT * FROM spending_transactions WHERE id = ?", arguments: [link])
        }
    }

    /// Changes what is given of a transaction (moving it to an account of another currency is refused).
    @discardableResult
    /// `receipt`: a new photo of its receipt, its upload queued with the change (in the space the
    /// transaction ends up in).
    public func edit(_ reference: String, _ details: TransactionDetails, receipt: PreparedAttachment? = nil) async throws -> Recorded {
        let current = try transaction(reference)
        try checkWritable(current)
        let other = try otherLeg(of: current)
        if let other { try checkWritable(other) }
        var change = TransactionEdit()
        var space = current.space
        if let name = details.account {
            guard current.leg == nil else {
                throw SpendingError.invalidField("A transfer between a shared account and your own keeps its accounts: delete it and make another")
            }
            let account = try self.account(name)
            try checkWritable(account)
            if let to = current.toAccountId, let target = try? self.account(to, allowArchived: true), target.space != account.space {
                throw SpendingError.transferAcrossSpaces(from: account.name, to: target.name)
            }
            space = account.space
            if account.currency != current.currency, details.amount == nil {
                throw SpendingError.amountNeeded(account: account.name, currency: account.currency)
            }
            change.account = account
        }
        if let amount = details.amount { change.amountMinor = try AmountText.parse(amount, currency: change.account?.currency ?? current.currency) }
        if details.category != nil {
            guard current.kind != .transfer else { throw SpendingError.invalidField("A transfer has no category: it moves money between your accounts") }
            change.category = try category(details.category, default: "other")
        }
        change.note = try Self.text(details.note, field: "note", collection: SyncCollections.spendingTransactions)
        change.occurredAt = try details.date.map { date throws(SpendingError) in try DateText.parse(date, now: now, calendar: configuration.calendar) }
        change.place = try Self.text(details.place, field: "place", collection: SyncCollections.spendingTransactions)
        change.position = try Self.position(details.position)
        guard !change.isEmpty || receipt != nil else {
            throw SpendingError.nothingToChange(fields: ["amount", "category", "note", "date", "account", "place", "position", "receipt"])
        }
        try await store.write { [change, space] tx in
            let newReceipt = try receipt.map { try tx.queueUpload($0, space: space).stringValue }
            let edit = { (transaction: inout SpendingTransaction) in
                change.apply(to: &transaction)
                if let newReceipt { transaction.receipt = newReceipt }
            }
            if space == current.space {
                try SpendingSchema.transactions.update(current.id, in: tx, edit)
                // NB: both sides of a transfer between spaces say the same money, the same day.
                if let other { try SpendingSchema.transactions.update(other.id, in: tx, change.applyShared) }
            } else {
                // To an account in another space: the transaction goes with it, whole.
                var moved = current
                edit(&moved)
                try Self.move(moved, to: space, carryingReceipt: newReceipt == nil, in: tx)
            }
        }
        let edited = try transaction(current.id)
        return Recorded(transaction: edited, warnings: try limits.check(after: edited))
    }

    /// Deletes a transaction on every device (both sides of a transfer between spaces).
    @discardableResult
    public func delete(_ reference: String) async throws -> SpendingTransaction {
        let current = try transaction(reference)
        try checkWritable(current)
        let other = try otherLeg(of: current)
        if let other { try checkWritable(other) }
        try await store.write { tx in
            try SpendingSchema.transactions.delete(current.id, in: tx)
            if let other { try SpendingSchema.transactions.delete(other.id, in: tx) }
        }
        return current
    }

    /// How many of an id's last characters lists show; fewer never pick a record.
    public static let shownIDLength = 8

    /// The transaction whose id is `reference`, or ends with it when it is at least the 8
    /// characters lists show (a shorter suffix could pick a record the person never meant).
    public func transaction(_ reference: String) throws -> SpendingTransaction {
        let trimmed = reference.trimmingCharacters(in: .whitespaces).lowercased()
        guard !trimmed.isEmpty else { throw SpendingError.invalidField("Which transaction? Give the 8 characters of its id that lists show") }
        let matches = try store.reader.read { db in
            if let exact = try SpendingTransaction.fetchOne(db, sql: "SELECT * FROM spending_transactions WHERE id = ?", arguments: [trimmed]) {
                return [exact]
            }
            guard trimmed.count >= Self.shownIDLength else { return [] }
            return try SpendingTransaction.fetchAll(db, sql: """
                SELECT * FROM spending_transactions WHERE substr(id, -length(?1)) = ?1 LIMIT 2
                """, arguments: [trimmed])
        }
        guard matches.count == 1 else {
            if matches.isEmpty, trimmed.count < Self.shownIDLength { throw SpendingError.idTooShort(reference) }
            throw matches.isEmpty ? SpendingError.noSuchTransaction(reference) : SpendingError.ambiguousTransaction(reference, matches: matches.count)
        }
        return matches[0]
    }

    /// Transactions matching `query`, newest first.
    public func transactions(_ query: TransactionQuery = TransactionQuery()) throws -> [SpendingTransaction] {
        try store.reader.read(try transactionsFetch(query))
    }

    /// How to read the transactions matching `query` inside a read: once, or again at each change (a live query).
    func transactionsFetch(_ query: TransactionQuery) throws -> @Sendable (Database) throws -> [SpendingTransaction] {
        var conditions: [String] = []
        var arguments: [DatabaseValue] = []
        if let days = query.days {
            guard (1...36_600).contains(days) else { throw SpendingError.invalidDays(days) }
            conditions.append("occurredAt >= ?")
            arguments.append((now - Int64(days) * 86_400_000).databaseValue)
        }
        if let name = query.account {
            let account = try account(name, allowArchived: true)
            conditions.append("(accountId = ? OR toAccountId = ?)")
            arguments += [account.id.databaseValue, account.id.databaseValue]
        }
        if let category = Categories.normalized(query.category) {
            conditions.append("category = ?")
            arguments.append(category.databaseValue)
        }
        // NB: a transfer between spaces is listed once, by its out side, where this device holds both.
        conditions.append("NOT (leg IS 'in' AND linkId IN (SELECT id FROM spending_transactions))")
        let filter = "WHERE " + conditions.joined(separator: " AND ")
        let limit = query.limit.map { " LIMIT \(max(0, $0))" } ?? ""
        let sql = "SELECT * FROM spending_transactions \(filter) ORDER BY occurredAt DESC, id DESC\(limit)"
        return { [arguments] db in try SpendingTransaction.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)) }
    }

    /// Every account's balance now: opening balance, plus incomes and transfers in, minus expenses
    /// and transfers out (the out side of a transfer between spaces takes, its in side brings).
    public func balances(includeArchived: Bool = false) throws -> [(account: SpendingAccount, balanceMinor: Int64)] {
        let accounts = try self.accounts(includeArchived: includeArchived)
        let sums = try store.reader.read { db -> [String: Int64] in
            var sums: [String: Int64] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT accountId, kind, SUM(amountMinor) AS total FROM spending_transactions WHERE leg IS NOT 'in' GROUP BY accountId, kind
                """) {
                let total: Int64 = row["total"]
                sums[row["accountId"], default: 0] += (row["kind"] as String) == "income" ? total : -total
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT toAccountId, SUM(amountMinor) AS total FROM spending_transactions
                WHERE toAccountId IS NOT NULL AND kind = 'transfer' AND leg IS NOT 'out' GROUP BY toAccountId
                """) {
                sums[row["toAccountId"], default: 0] += row["total"] as Int64
            }
            return sums
        }
        return accounts.map { ($0, $0.openingBalanceMinor + (sums[$0.id] ?? 0)) }
    }

    // MARK: - Helpers

    /// Refuses a write to `account` when the person only views the space it is shared in, before
    /// anything is written or queued: the server would refuse it.
    func checkWritable(_ account: SpendingAccount) throws {
        try checkWritable(space: account.space, naming: account.name)
    }

    /// Refuses a change of `transaction` when the person only views the space it is in.
    func checkWritable(_ transaction: SpendingTransaction) throws {
        guard transaction.space != nil else { return }
        let name = (try? account(transaction.accountId, allowArchived: true).name) ?? String(transaction.accountId.suffix(Self.shownIDLength))
        try checkWritable(space: transaction.space, naming: name)
    }

    private func checkWritable(space id: String?, naming account: String) throws {
        if let space = try spaces?.viewedOnly(id) { throw SpendingError.viewerOf(account: account, space: space.name) }
    }

    /// Writes a new transaction in its account's space: a shared account's transactions are its members'.
    static func insert(_ transaction: SpendingTransaction, receipt: PreparedAttachment? = nil, in tx: LocalTransaction) throws {
        let space = try SpendingSchema.accounts.record(transaction.accountId, tx.db)?.space
        var transaction = transaction
        if let receipt { transaction.receipt = try tx.queueUpload(receipt, space: space).stringValue }
        try SpendingSchema.transactions.insert(transaction, space: space, in: tx)
    }

    /// The receipt of a transaction (its id or 8-character id), and the space it is in; nil when it has none.
    public func receipt(of id: String) throws -> (transaction: SpendingTransaction, receipt: AttachmentReference?, space: String?) {
        let transaction = try self.transaction(id)
        return (transaction, transaction.receipt.flatMap(AttachmentReference.init(parsing:)), transaction.space)
    }

    /// Moves a transaction to another space (nil: the person's own) with the same id: deleted from
    /// the space it is in and created whole in the new one, in the caller's transaction. Its
    /// receipt, unless a new one comes with the move, goes with it as the row holds it, and its
    /// photo is uploaded to the new space (fetched from the old one first when this device does not
    /// have it), so that the space's members can read it.
    static func move(_ transaction: SpendingTransaction, to space: String?, carryingReceipt: Bool = true, in tx: LocalTransaction) throws {
        var moved = transaction
        if carryingReceipt, let row = try SpendingSchema.transactions.record(transaction.id, tx.db) {
            let receipt = row.receipt.flatMap(AttachmentReference.init(parsing:))
            moved.receipt = receipt?.description
            if let receipt { try tx.queueUpload(existing: receipt, space: space, from: row.space) }
        }
        try SpendingSchema.transactions.move(moved, to: space, in: tx)
    }

    func category(_ text: String?, default fallback: String) throws(SpendingError) -> String {
        guard let value = Categories.normalized(text) else { return fallback }
        return try Self.text(value, field: "category", collection: SyncCollections.spendingTransactions)!
    }

    /// A colour as kept, refused when screens would not know it; empty is none.
    static func colour(_ text: String?) throws(SpendingError) -> String? {
        guard let trimmed = try Self.text(text, field: "colour", collection: SyncCollections.spendingAccounts), !trimmed.isEmpty else { return nil }
        guard let colour = AccountColours.normalized(trimmed) else { throw .invalidColour(trimmed) }
        return colour
    }

    /// Refuses what the server would refuse, so a mistake shows now rather than at sync.
    static func text(_ value: String?, field: String, collection: SyncCollection, required: Bool = false) throws(SpendingError) -> String? {
        guard let value else {
            if required { throw .invalidField("The \(field) is required") }
            return nil
        }
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if required, trimmed.isEmpty { throw .invalidField("The \(field) cannot be empty") }
        let limit = collection.fields[field]?.maxLength ?? .max
        if trimmed.count > limit { throw .invalidField("The \(field) is longer than \(limit) characters") }
        let allowed: Set<Unicode.Scalar> = field == "note" ? ["\n", "\t"] : []
        if let character = ControlCharacters.first(in: trimmed, allowing: allowed) {
            throw .invalidField("The \(field) contains \(character): type it without one")
        }
        return trimmed
    }

    /// A position on Earth, refused when it is not one.
    static func position(_ position: GeoPosition?) throws(SpendingError) -> GeoPosition? {
        if let position, !position.isValid { throw .invalidCoordinates(position.description) }
        return position
    }
}

extension Ledger {
    /// The person's calendar (their time zone, weeks from Monday).
    public var calendar: Calendar { configuration.calendar }
}
