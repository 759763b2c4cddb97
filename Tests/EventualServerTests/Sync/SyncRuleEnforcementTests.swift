import EventualAPI
import Foundation
import Logging
import SQLKit
import Testing
@testable import EventualServer

/// A push result with what a rule's refusal adds.
private struct RuleResultJSON: Decodable {
    let id: String
    let status: String
    let message: String?
    let code: String?
    let field: String?
    let current: SpaceRecordJSON?
}

private func account(_ currency: String = "EUR", kind: String = "bank") -> [String: SyncValue] {
    ["name": "Main", "kind": .string(kind), "currency": .string(currency), "openingBalanceMinor": 0, "archived": false,
     "createdAt": 1_764_000_000_000]
}

private func transaction(_ accountID: String, to target: String? = nil, currency: String = "EUR") -> [String: SyncValue] {
    var fields: [String: SyncValue] = ["accountId": .string(accountID), "kind": target == nil ? "expense" : "transfer",
                                       "amountMinor": 250, "currency": .string(currency), "occurredAt": 1_764_000_000_000,
                                       "automatic": false]
    if let target { fields["toAccountId"] = .string(target) }
    return fields
}

private func accountChange(_ id: String, _ fields: [String: SyncValue] = account(), deleted: Bool = false) -> SyncChangeJSON {
    SyncChangeJSON(collection: "spending_accounts", recordId: id, hlc: Stamps.at(-5000), fields: fields, deleted: deleted)
}

private func transactionChange(_ id: String, _ fields: [String: SyncValue]) -> SyncChangeJSON {
    SyncChangeJSON(collection: "spending_transactions", recordId: id, hlc: Stamps.at(-4000), fields: fields)
}

extension API {
    /// Pushes to `space` (nil: the pusher's own) and decodes the results with their rule fields, requiring a 200.
    fileprivate func ruled(_ changes: [SyncChangeJSON], to space: String? = nil, as account: Account,
                           sourceLocation: SourceLocation = #_sourceLocation) async throws -> [RuleResultJSON] {
        let answer = try await push(changes, to: space, as: account)
        try #require(answer.status == .ok, "push: \(answer.text)", sourceLocation: sourceLocation)
        struct Results: Decodable { let results: [RuleResultJSON] }
        return try answer.decode(Results.self, sourceLocation: sourceLocation).results
    }
}

@Suite("Sync: the server enforces each collection's rules on the merged record", .timeLimit(.minutes(3)))
struct SyncRuleEnforcementTests {
    @Test(arguments: Backend.available)
    func twoPeopleConsumingTheLastUnitOneIsRefusedWithTheServersRecord(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api in
            // Given one yoghurt left in alice and bob's Home
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            let home = try await api.createdSpace("Home", as: alice)
            try await api.join(bob, to: home.id, by: alice)
            _ = try await api.pushed([SyncChangeJSON(recordId: "yoghurt", hlc: Stamps.at(-9000), fields: pantryItem(["quantity": 1]))],
                                     to: home.id, as: alice)
            // When each consumed it offline and both devices push at once
            let fromAlice = SyncChangeJSON(recordId: "yoghurt", hlc: Stamps.at(-3000, node: "alice"), deltas: ["quantity": -1])
            let fromBob = SyncChangeJSON(recordId: "yoghurt", hlc: Stamps.at(-2000, node: "bob"), deltas: ["quantity": -1])
            async let alices = api.ruled([fromAlice], to: home.id, as: alice)
            async let bobs = api.ruled([fromBob], to: home.id, as: bob)
            let results = try await [alices[0], bobs[0]]
            // Then one applies and the other is refused with the rule's words and the server's record at 0
            #expect(results.map(\.status).sorted() == ["applied", "rejected"])
            let refused = try #require(results.first { $0.status == "rejected" })
            #expect(refused.code == "below_minimum")
            #expect(refused.field == "quantity")
            #expect(refused.message == "Only 0 left: quantity cannot go below 0 (it would be -1)")
            let current = try #require(refused.current)
            #expect([current.collection, current.recordId, current.space] == ["pantry_items", "yoghurt", home.id])
            #expect(current.fields["quantity"] == 0)
            #expect(current.deleted == false)
            // And both see 0, not -1
            for person in [alice, bob] {
                #expect(try await api.pulledAll(as: person).records["\(home.id)/yoghurt"]?.fields["quantity"] == 0, "\(person.username)")
            }
            // And the refused change was not remembered as applied: sent again, it is checked again
            let (change, pusher) = refused.id == fromAlice.id ? (fromAlice, alice) : (fromBob, bob)
            #expect(try await api.ruled([change], to: home.id, as: pusher).map(\.code) == ["below_minimum"])
        }
    }

    @Test(arguments: Backend.available)
    func aBatchWithOneRuleBreakingChangeAppliesTheOthers(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let alice = try await api.signUp("alice")
            _ = try await api.pushed([SyncChangeJSON(recordId: "rice", hlc: Stamps.at(-9000), fields: pantryItem(["quantity": 2]))], as: alice)
            let results = try await api.ruled([
                SyncChangeJSON(recordId: "beans", hlc: Stamps.at(-5000), fields: pantryItem(["quantity": 3])),
                SyncChangeJSON(recordId: "cake", hlc: Stamps.at(-5000), fields: pantryItem(["status": "eaten"])),
                SyncChangeJSON(recordId: "rice", hlc: Stamps.at(-5000), deltas: ["quantity": -5]),
                SyncChangeJSON(recordId: "beans", hlc: Stamps.at(-4000), deltas: ["quantity": -3]),
                SyncChangeJSON(recordId: "salt", hlc: Stamps.at(-5000), fields: pantryItem(["quantity": -1])),
                SyncChangeJSON(recordId: "rice", hlc: Stamps.at(-3000), fields: ["name": "Basmati rice"]),
            ], as: alice)
            #expect(results.map(\.status) == ["applied", "rejected", "rejected", "applied", "rejected", "applied"])
            #expect(results.map(\.code) == [nil, "not_allowed", "below_minimum", nil, "below_minimum", nil])
            #expect(results.map(\.field) == [nil, "status", "quantity", nil, "quantity", nil])
            #expect(results[1].message == "status cannot be 'eaten': it is one of inPantry, consumed, thrownAway")
            #expect(results[1].current == nil, "the server holds no cake")
            #expect(results[2].current?.fields["quantity"] == 2)
            #expect(results[2].current?.fields["name"] == "Basmati rice", "current is the record as the whole push left it")
            #expect(results[4].message == "quantity cannot go below 0 (it would be -1)")
            let records = try await api.pulledRecords(as: alice)
            #expect(Set(records.keys) == ["rice", "beans"])
            #expect(records["rice"]?.fields["quantity"] == 2)
            #expect(records["beans"]?.fields["quantity"] == 0, "down to zero is allowed")
        }
    }

    @Test(arguments: Backend.available)
    func aTransactionNamesAnAccountInItsCurrencyThatThePusherCanSee(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given alice's accounts in euros and dollars, a shared space, and bob's own account
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            let home = try await api.createdSpace("Home", as: alice)
            _ = try await api.pushed([accountChange("eur"), accountChange("usd", account("USD"))], to: nil, as: alice)
            _ = try await api.pushed([accountChange("home-eur")], to: home.id, as: alice)
            _ = try await api.pushed([accountChange("bobs")], to: nil, as: bob)
            // When she records transactions naming each
            let results = try await api.ruled([
                transactionChange("t-ok", transaction("eur")),
                transactionChange("t-missing", transaction("nowhere")),
                transactionChange("t-currency", transaction("usd")),
                transactionChange("t-bobs", transaction("bobs")),
                transactionChange("t-transfer", transaction("eur", to: "home-eur")),
                transactionChange("t-to-usd", transaction("eur", to: "usd")),
                transactionChange("t-kind", transaction("eur").merging(["kind": "refund"]) { $1 }),
            ], as: alice)
            // Then only those naming an account she can see, in the transaction's currency, apply
            #expect(results.map(\.status) == ["applied", "rejected", "rejected", "rejected", "applied", "rejected", "rejected"])
            #expect(results.map(\.code) == [nil, "missing_reference", "mismatched_reference", "missing_reference", nil,
                                            "mismatched_reference", "not_allowed"])
            #expect(results.map(\.field) == [nil, "accountId", "accountId", "accountId", nil, "toAccountId", "kind"])
            #expect(results[2].message == "currency is 'EUR' but the spending_accounts record usd that accountId names has currency 'USD':"
                + " they must be the same")
            #expect(results[3].message?.contains("no record of spending_accounts you can see") == true, "bob's space is not hers")
            // And a transaction in the shared space may name her own account (sharing an account moves its transfers with it)
            let shared = try await api.ruled([transactionChange("t-shared", transaction("eur", to: "home-eur"))], to: home.id, as: alice)
            #expect(shared.map(\.status) == ["applied"])
            // And an account in another currency is refused again when the transaction's currency changes to not match
            let recurrencied = try await api.ruled([SyncChangeJSON(collection: "spending_transactions", recordId: "t-ok",
                                                                   hlc: Stamps.at(-1000), fields: ["currency": "USD"])], as: alice)
            #expect(recurrencied.map(\.code) == ["mismatched_reference"])
            #expect(recurrencied.first?.current?.fields["currency"] == "EUR")
            // And an account's kind is one of the closed set
            #expect(try await api.ruled([accountChange("odd", account(kind: "crypto"))], as: alice).map(\.code) == ["not_allowed"])
        }
    }

    @Test(arguments: Backend.available)
    func anAccountPushedEarlierInTheSameBatchCountsOneDeletedDoesNot(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let alice = try await api.signUp("alice")
            _ = try await api.pushed([accountChange("old")], to: nil, as: alice)
            let results = try await api.ruled([
                transactionChange("too-early", transaction("new")),
                accountChange("new"),
                transactionChange("after", transaction("new")),
                accountChange("old", [:], deleted: true),
                transactionChange("on-deleted", transaction("old")),
            ], as: alice)
            #expect(results.map(\.status) == ["rejected", "applied", "applied", "applied", "rejected"])
            #expect(results.map(\.code) == ["missing_reference", nil, nil, nil, "missing_reference"])
            #expect(Set(try await api.pulledRecords(as: alice).keys) == ["new", "after", "old"])
        }
    }

    @Test(arguments: Backend.available)
    func aRuleLookupThatFailsIsAServerErrorAndNothingIsWritten(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            // Given an account whose stored row the server cannot read
            let alice = try await api.signUp("alice")
            _ = try await api.pushed([accountChange("broken")], to: nil, as: alice)
            let database = try await Database.open(location, logger: Logger(label: "test"))
            func setFields(_ fields: String) async throws {
                try await database.withConnection { sql in
                    try await sql.update("sync_records").set("fields", to: fields).where("record_id", .equal, "broken").run()
                }
            }
            let good = try await database.withConnection { sql in
                try await sql.select().column("fields").from("sync_records").where("record_id", .equal, "broken").first()?
                    .decode(column: "fields", as: String.self)
            }
            try await setFields("{not json")
            // When a batch with an item and a transaction naming that account is pushed
            let batch = [SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-5000), fields: pantryItem()),
                         transactionChange("t", transaction("broken"))]
            let answer = try await api.push(batch, to: nil, as: alice)
            // Then it is a server failure, which the device retries, not a rejection
            #expect(answer.status == .internalServerError, "\(answer.text)")
            // And nothing of the batch was written
            let written = try await database.withConnection { sql in
                try await sql.select().column("record_id").from("sync_records").where(SQLColumn("record_id"), .in, SQLBind.group(["milk", "t"])).all().count
            }
            #expect(written == 0)
            // And once the row reads again, the same batch applies whole
            try await setFields(try #require(good))
            #expect(try await api.ruled(batch, as: alice).map(\.status) == ["applied", "applied"])
            await database.close()
        }
    }
}
