import Testing
import EventualAPI

@Suite("SyncRule: what a collection's records keep after merging, the same check on server and device")
struct SyncRuleTests {
    let items = SyncCollections.pantryItems
    let transactions = SyncCollections.spendingTransactions

    private struct StorageDown: Error {}

    func item(quantity: SyncValue, status: String = "inPantry") -> [String: SyncValue] {
        ["name": .string("Milk"), "quantity": quantity, "boughtAt": .integer(1), "status": .string(status)]
    }

    func transaction(account: String = "acc-eur", to: String? = nil, currency: String = "EUR", kind: String = "expense")
        -> [String: SyncValue]
    {
        var fields: [String: SyncValue] = ["accountId": .string(account), "kind": .string(kind), "amountMinor": .integer(250),
                                           "currency": .string(currency), "occurredAt": .integer(1), "automatic": .boolean(false)]
        if let to { fields["toAccountId"] = .string(to) }
        return fields
    }

    /// Two accounts in euros and one in dollars; any other id is missing.
    func accounts(_ collection: String, _ id: String) -> [String: SyncValue]? {
        #expect(collection == "spending_accounts")
        switch id {
        case "acc-eur", "acc-eur-2": return ["currency": .string("EUR"), "kind": .string("bank")]
        case "acc-usd": return ["currency": .string("USD"), "kind": .string("cash")]
        default: return nil
        }
    }

    func noLookup(_ collection: String, _ id: String) -> [String: SyncValue]? {
        Issue.record("looked up \(collection) \(id)")
        return nil
    }

    @Test func theAppsCollectionsDeclareTheirRules() {
        #expect(items.rules == [.notBelow("quantity", 0), .oneOf("status", ["inPantry", "consumed", "thrownAway"]),
                                .editableWhile("status", ["inPantry"])])
        #expect(transactions.deletionIsFinal && !items.deletionIsFinal && !SyncCollections.spendingAccounts.deletionIsFinal)
        #expect(SyncCollections.spendingAccounts.rules == [.oneOf("kind", ["cash", "bank", "card", "savings"])])
        #expect(transactions.rules.map(\.field) == ["kind", "leg", "accountId", "toAccountId"])
        #expect(SyncCollections.spendingLimits.rules.isEmpty)
    }

    @Test func anItemOutOfThePantryTakesNoEditThatLeavesItOutAndOneThatBringsItBackGoes() throws {
        let thrown = item(quantity: .integer(2), status: "thrownAway")
        // An edit or a use that leaves it thrown away is refused, whatever field it moves
        for merged in [item(quantity: .integer(5), status: "thrownAway"), thrown.merging(["name": "Oats"]) { $1 }] {
            let violation = try #require(try items.violation(merged: merged, previous: thrown, lookup: noLookup))
            #expect(violation.code == SyncRuleViolation.setAside && violation.field == "status")
            #expect(violation.message.hasPrefix("Its status is 'thrownAway'"), "\(violation.message)")
        }
        // One that brings it back, one that moves it between consumed and thrown away, and one that changes nothing go
        #expect(try items.violation(merged: item(quantity: .integer(5)), previous: thrown, lookup: noLookup) == nil)
        #expect(try items.violation(merged: item(quantity: .integer(2), status: "consumed"), previous: thrown, lookup: noLookup) == nil)
        #expect(try items.violation(merged: thrown, previous: thrown, lookup: noLookup) == nil)
        // A new record, one that never had a status, and a record sent back after a restore are not set aside
        #expect(try items.violation(merged: thrown, previous: nil, lookup: noLookup) == nil)
        #expect(try items.violation(merged: ["quantity": 3], previous: ["quantity": 2], lookup: noLookup) == nil)
        #expect(try items.violation(merged: item(quantity: .integer(5), status: "thrownAway"), previous: thrown, restoring: true,
                                    lookup: noLookup) == nil)
    }

    @Test func aQuantityMayReachZeroButNotGoBelow() throws {
        #expect(try items.violation(merged: item(quantity: .integer(0)), previous: item(quantity: .integer(1)), lookup: noLookup) == nil)
        let violation = try #require(try items.violation(merged: item(quantity: .integer(-1)), previous: item(quantity: .integer(0)),
                                                         lookup: noLookup))
        #expect(violation == SyncRuleViolation(code: "below_minimum", field: "quantity",
                                               message: "Only 0 left: quantity cannot go below 0 (it would be -1)"))
        let fraction = try #require(try items.violation(merged: item(quantity: .number(-0.5)), previous: item(quantity: .number(0.25)),
                                                        lookup: noLookup))
        #expect(fraction.message == "Only 0.25 left: quantity cannot go below 0 (it would be -0.5)")
        let created = try #require(try items.violation(merged: item(quantity: .integer(-2)), previous: nil, lookup: noLookup))
        #expect(created.message == "quantity cannot go below 0 (it would be -2)")
    }

    @Test func aRecordAlreadyBelowTheMinimumCanBeEditedAndBroughtBack() throws {
        // Records written before the rule existed (two offline consumptions of the last unit).
        var renamed = item(quantity: .integer(-1))
        renamed["name"] = .string("Oat milk")
        #expect(try items.violation(merged: renamed, previous: item(quantity: .integer(-1)), lookup: noLookup) == nil)
        #expect(try items.violation(merged: item(quantity: .integer(0)), previous: item(quantity: .integer(-1)), lookup: noLookup) == nil)
        #expect(try items.violation(merged: item(quantity: .integer(-2)), previous: item(quantity: .integer(-1)), lookup: noLookup)?.code
                == "below_minimum", "going further down is still refused")
    }

    @Test func aStatusIsOneOfTheClosedSet() throws {
        for status in ["inPantry", "consumed", "thrownAway"] {
            #expect(try items.violation(merged: item(quantity: .integer(1), status: status), previous: nil, lookup: noLookup) == nil)
        }
        let violation = try #require(try items.violation(merged: item(quantity: .integer(1), status: "eaten"),
                                                         previous: item(quantity: .integer(1)), lookup: noLookup))
        #expect(violation == SyncRuleViolation(code: "not_allowed", field: "status",
                                               message: "status cannot be 'eaten': it is one of inPantry, consumed, thrownAway"))
        let unchanged = item(quantity: .integer(1), status: "legacy")
        #expect(try items.violation(merged: unchanged, previous: unchanged, lookup: noLookup) == nil,
                "a value written before the rule is kept until someone changes it")
    }

    @Test func aTransactionNamesAnAccountInItsCurrency() throws {
        #expect(try transactions.violation(merged: transaction(), previous: nil, lookup: accounts) == nil)
        #expect(try transactions.violation(merged: transaction(to: "acc-eur-2", kind: "transfer"), previous: nil, lookup: accounts) == nil)

        let missing = try #require(try transactions.violation(merged: transaction(account: "acc-gone"), previous: nil, lookup: accounts))
        #expect(missing.code == "missing_reference")
        #expect(missing.field == "accountId")
        #expect(missing.message.contains("'acc-gone'"))

        let currency = try #require(try transactions.violation(merged: transaction(account: "acc-usd"), previous: nil, lookup: accounts))
        #expect(currency == SyncRuleViolation(
            code: "mismatched_reference", field: "accountId",
            message: "currency is 'EUR' but the spending_accounts record acc-usd that accountId names has currency 'USD': they must be the same"))

        let target = try #require(try transactions.violation(merged: transaction(to: "acc-usd", kind: "transfer"), previous: nil,
                                                             lookup: accounts))
        #expect(target.code == "mismatched_reference")
        #expect(target.field == "toAccountId")
        #expect(try transactions.violation(merged: transaction(kind: "refund"), previous: nil, lookup: accounts)?.code == "not_allowed")
    }

    @Test func aReferenceIsLookedUpOnlyWhenTheWriteMovesIt() throws {
        let stored = transaction(account: "acc-gone")
        var edited = stored
        edited["note"] = .string("lunch")
        #expect(try transactions.violation(merged: edited, previous: stored, lookup: noLookup) == nil,
                "a note on a transaction whose account was deleted since")
        var recurrencied = stored
        recurrencied["currency"] = .string("USD")
        #expect(try transactions.violation(merged: recurrencied, previous: stored, lookup: accounts)?.code == "missing_reference",
                "a change of the matched field checks the reference again")
    }

    @Test func aLookupThatThrowsPropagatesInsteadOfRefusing() {
        #expect(throws: StorageDown.self) {
            try transactions.violation(merged: transaction(), previous: nil) { _, _ in throw StorageDown() }
        }
    }
}
