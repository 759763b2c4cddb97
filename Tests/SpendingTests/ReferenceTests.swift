import EventualAPI
import Foundation
import Testing
@testable import Spending

@Suite("Records are picked by what lists show, never by a guess")
struct ReferenceTests {
    @Test func aTransactionNeedsTheEightCharactersListsShow() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let ledger = try scratchLedger(scratch, clock: TestClock())
        try await ledger.addAccount(name: "Cash", currency: "EUR")
        var ids: [String] = []
        for amount in ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"] {
            ids.append(try await ledger.record(.expense, TransactionDetails(amount: amount, account: "Cash")).transaction.id)
        }
        // A one-character id, or any suffix or prefix shorter than 8 characters, deletes nothing
        for reference in [String(ids[0].suffix(1)), String(ids[0].suffix(7)), String(ids[0].prefix(8)), "9"] {
            await #expect(throws: SpendingError.self, "\(reference)") { try await ledger.delete(reference) }
        }
        #expect(throws: SpendingError.idTooShort("9")) { try ledger.transaction("9") }
        #expect(try ledger.transactions().count == 12)
        // The 8 characters of the list, or the whole id, pick exactly one
        #expect(try ledger.transaction(String(ids[3].suffix(8))).id == ids[3])
        #expect(try ledger.transaction(ids[4].uppercased()).id == ids[4])
        try await ledger.delete(String(ids[5].suffix(8)))
        #expect(try ledger.transactions().count == 11 && !(try ledger.transactions().contains { $0.id == ids[5] }))
    }

    @Test func anAccountCannotBeRenamedToNothing() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let ledger = try scratchLedger(scratch, clock: TestClock())
        try await ledger.addAccount(name: "Cash", currency: "EUR", colour: "green")
        for name in ["", "   ", "\t"] {
            await #expect(throws: SpendingError.invalidField("The name cannot be empty"), "'\(name)'") {
                try await ledger.editAccount("Cash", name: name)
            }
        }
        #expect(try ledger.accounts().map(\.name) == ["Cash"])
        // An empty colour clears it
        #expect(try await ledger.editAccount("Cash", colour: "").colour == nil)
        #expect(try await ledger.editAccount("Cash", name: "  Wallet ").name == "Wallet")
    }
}
