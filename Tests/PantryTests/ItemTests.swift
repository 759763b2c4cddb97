import EventualKit
import Foundation
import GRDB
import Testing
@testable import Pantry

/// A pantry store on a scratch database, no server involved.
func scratchStore() throws -> (PantryStore, ScratchFolder) {
    let scratch = try ScratchFolder()
    let store = try LocalStore(path: scratch.url.appendingPathComponent("pantry.sqlite").path, migrations: PantrySchema.migrations)
    return (PantryStore(store: store), scratch)
}

@Suite("Items: add, consume, remove, edit, list, search", .timeLimit(.minutes(2)))
struct ItemTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000) // 2026-09-21

    @Test func addedItemIsListedAndQueuedForTheServer() async throws {
        let (items, scratch) = try scratchStore()
        defer { scratch.remove() }
        // When an item is added
        let added = try await items.add(ItemDetails(name: "Milk", quantity: 2, unit: "l", category: "dairy"), now: now)
        // Then it is in the list, and its change waits in the outbox
        #expect(try items.list().map(\.name) == ["Milk"])
        #expect(try Outbox(store: items.store).counts().pending == 1)
        #expect(try items.item(String(added.id.suffix(8))).id == added.id)
    }

    @Test func partialConsumeLeavesTheRestAndZeroLeavesThePantry() async throws {
        let (items, scratch) = try scratchStore()
        defer { scratch.remove() }
        let eggs = try await items.add(ItemDetails(name: "Eggs", quantity: 6))
        // When 4 of 6 are eaten
        let after = try await items.consume(eggs.id, quantity: 4)
        // Then 2 are left
        #expect(after.quantity == 2)
        #expect(after.status == .inPantry)
        // When the rest is eaten, the item leaves the pantry
        let finished = try await items.consume(eggs.id)
        #expect(finished.status == .consumed)
        #expect(try items.list().isEmpty)
        await #expect(throws: PantryError.itemNotInPantry("Eggs")) { try await items.consume(eggs.id) }
    }

    @Test func removedItemIsThrownAwayAndGone() async throws {
        let (items, scratch) = try scratchStore()
        defer { scratch.remove() }
        let fish = try await items.add(ItemDetails(name: "Fish"))
        let removed = try await items.remove(fish.id)
        #expect(removed.status == .thrownAway)
        #expect(try items.list().isEmpty)
        #expect(try items.item(fish.id).status == .thrownAway)
    }

    @Test func editChangesOnlyTheGivenFields() async throws {
        let (items, scratch) = try scratchStore()
        defer { scratch.remove() }
        let rice = try await items.add(ItemDetails(name: "Rice", quantity: 1, category: "grains", expiresOn: Day(iso: "2027-01-01")))
        let edited = try await items.edit(rice.id, ItemDetails(quantity: 3, place: "Coop"))
        #expect(edited.quantity == 3)
        #expect(edited.place == "Coop")
        #expect(edited.category == "grains")
        #expect(edited.expiresOn == Day(iso: "2027-01-01"))
        let cleared = try await items.edit(rice.id, ItemDetails(), clearExpiry: true)
        #expect(cleared.expiresOn == nil)
    }

    @Test func listSortsByExpiryAndFilters() async throws {
        let (items, scratch) = try scratchStore()
        defer { scratch.remove() }
        let today = Day(date: now)
        try await items.add(ItemDetails(name: "Yogurt", category: "dairy", expiresOn: today.adding(days: 2), place: "Coop, Via Roma 1"))
        try await items.add(ItemDetails(name: "Old cheese", category: "dairy", expiresOn: today.adding(days: -1)))
        try await items.add(ItemDetails(name: "Apples", category: "fruit", expiresOn: today.adding(days: 10)))
        try await items.add(ItemDetails(name: "Salt"))
        #expect(try items.list(now: now).map(\.name) == ["Old cheese", "Yogurt", "Apples", "Salt"])
        #expect(try items.list(ItemQuery(sort: .name), now: now).map(\.name) == ["Apples", "Old cheese", "Salt", "Yogurt"])
        #expect(try items.list(ItemQuery(expiringWithinDays: 3), now: now).map(\.name) == ["Yogurt"])
        #expect(try items.list(ItemQuery(expiredOnly: true), now: now).map(\.name) == ["Old cheese"])
        #expect(try items.list(ItemQuery(category: "DAIRY"), now: now).map(\.name) == ["Old cheese", "Yogurt"])
        #expect(try items.list(ItemQuery(placeContains: "roma"), now: now).map(\.name) == ["Yogurt"])
    }

    @Test func searchFindsWordsInNameDescriptionCategoryAndPlace() async throws {
        let (items, scratch) = try scratchStore()
        defer { scratch.remove() }
        let pesto = try await items.add(ItemDetails(name: "Pesto alla genovese", description: "basil sauce", category: "sauces", place: "Coop"))
        try await items.add(ItemDetails(name: "Spaghetti", category: "pasta", place: "Esselunga"))
        #expect(try items.search("genovese").map(\.name) == ["Pesto alla genovese"])
        #expect(try items.search("basil").map(\.name) == ["Pesto alla genovese"])
        #expect(try items.search("esselunga").map(\.name) == ["Spaghetti"])
        #expect(try items.search("spag").map(\.name) == ["Spaghetti"])  // the last word may be a prefix
        #expect(try items.search("\"unbalanced (quote").isEmpty)      // never a syntax error
        // When an item is renamed or leaves the pantry, search follows
        try await items.edit(pesto.id, ItemDetails(name: "Pesto rosso"))
        #expect(try items.search("genovese").isEmpty)
        #expect(try items.search("rosso").count == 1)
        #expect(try items.search("pesto").count == 1)  // a word kept by the rename stays indexed once
        try await items.edit(pesto.id, ItemDetails(quantity: 2))
        #expect(try items.search("pesto").count == 1)
        try await items.consume(pesto.id)
        #expect(try items.search("rosso").isEmpty)
    }

    @Test func whatIsLeftBelowTheQuantityStepFinishesTheItem() async throws {
        let (items, scratch) = try scratchStore()
        defer { scratch.remove() }
        // Given 1.1 kg of rice, of which 0.1 kg was used (1.0000000000000002 kg in a double)
        let rice = try await items.add(ItemDetails(name: "Rice", quantity: 1.1, unit: "kg"))
        let after = try await items.consume(rice.id, quantity: 0.1)
        #expect(PantryItem.rounded(after.quantity) == 1)
        // When the kilogram left is used
        let finished = try await items.consume(rice.id, quantity: 1)
        // Then the rice is finished, not left at 2e-16 kg
        #expect(finished.status == .consumed && finished.quantity == 0)
        #expect(try items.list().isEmpty)
    }

    @Test func aQuantityBelowTheStepIsRefusedInTheWordsTyped() async throws {
        #expect(throws: PantryError.invalidQuantity("0.0001")) { try ItemDetails.quantity(typed: "0.0001") }
        #expect(throws: PantryError.invalidQuantity("1e20")) { try ItemDetails.quantity(typed: "1e20") }
        #expect(throws: PantryError.invalidQuantity("0")) { try ItemDetails.quantity(typed: "0") }
        #expect(try ItemDetails.quantity(typed: " 0.25 ") == 0.25)
    }

    @Test func invalidDetailsAreRefusedBeforeAnythingIsWritten() async throws {
        let (items, scratch) = try scratchStore()
        defer { scratch.remove() }
        await #expect(throws: PantryError.invalidQuantity("-1.0")) { try await items.add(ItemDetails(name: "X", quantity: -1)) }
        await #expect(throws: PantryError.self) { try await items.add(ItemDetails(name: String(repeating: "a", count: 201))) }
        #expect(try Outbox(store: items.store).counts().pending == 0)
    }
}
