import Foundation
import Testing
@testable import Pantry

/// What a person who had read only the docs found in a week with the pantry: quantities without
/// floating-point noise, a shopping list, the same words and exit statuses as the other apps.
@Suite("pantry as a stranger used it for a week", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct StrangerWeekTests {
    @Test func quantitiesAreShownToTheGramNotToTheLastBitOfADouble() async throws {
        try await withLiveServer { server, scratch in
            let (pantry, _) = try await signedInProcess(server, scratch)
            // Given 0.3 kg of flour
            #expect(try await pantry.run(["add", "--name", "Flour", "--quantity", "0.3", "--unit", "kg"]).status == 0)
            let id = try #require(try jsonItems(try await pantry.run(["list", "--json"])).first?["id"] as? String)
            // When 0.1 kg is used
            let consumed = try await pantry.run(["consume", id, "--quantity", "0.1"])
            // Then 0.2 kg is left, said so everywhere
            #expect(consumed.stdout == "Flour: 0.2 kg left.\n", "\(consumed.stdout)\(consumed.stderr)")
            #expect(try await pantry.run(["list"]).stdout.contains(" 0.2 kg "))
            #expect(try await pantry.run(["show", id]).stdout.contains("quantity  0.2 kg"))
            #expect(try jsonItems(try await pantry.run(["list", "--json"])).first?["quantity"] as? Double == 0.2)
            #expect(try jsonObject(try await pantry.run(["show", id, "--json"]))["quantity"] as? Double == 0.2)
            // And no command prints the noise
            for arguments in [["list"], ["show", id], ["list", "--json"]] {
                #expect(!(try await pantry.run(arguments)).stdout.contains("0.1999"), "\(arguments)")
            }
        }
    }

    @Test func whatRanOutIsOnTheShoppingList() async throws {
        try await withLiveServer { server, scratch in
            let (pantry, _) = try await signedInProcess(server, scratch)
            // Given flour bought once and used up, and fish thrown away
            for name in ["Flour", "Fish"] { #expect(try await pantry.run(["add", "--name", name]).status == 0) }
            let ids = Dictionary(uniqueKeysWithValues: try jsonItems(try await pantry.run(["list", "--json"]))
                .map { ($0["name"] as? String ?? "", $0["id"] as? String ?? "") })
            #expect(try await pantry.run(["consume", try #require(ids["Flour"])]).stdout == "Finished Flour.\n")
            #expect(try await pantry.run(["remove", try #require(ids["Fish"])]).status == 0)
            // When the reminders are asked for
            let reminders = try jsonObject(try await pantry.run(["reminders", "--json"]))
            // Then the flour is on the shopping list, as docs/pantry.md promises, and the fish is not
            let list = try #require(reminders["shoppingList"] as? [[String: Any]])
            #expect(list.map { $0["name"] as? String } == ["Flour"], "\(list)")
            #expect(list.first?["timesBought"] as? Int == 1)
            let table = try await pantry.run(["reminders"])
            #expect(table.stdout.contains("Shopping list") && table.stdout.contains("Flour") && table.stdout.contains("once"), "\(table.stdout)")
        }
    }
}
