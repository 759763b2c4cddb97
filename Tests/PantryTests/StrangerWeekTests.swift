import EventualAPI
import EventualKit
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

    @Test func aRefusedSignInIsSaidByStatusAsWhoamiSaysWhoItIs() async throws {
        try await withLiveServer { server, scratch in
            let user = try await TestUser.register(on: server)
            // Given a device signed in online 8 days ago, and one signed in just now
            var stale = device(scratch.folder("stale"), server: server).configuration
            stale.clock = { UnixMillis.now() - 8 * 86_400_000 }
            let old = try await PantryApp(configuration: stale).login(email: user.email, password: user.password).pantry
            let fresh = try await device(scratch.folder("fresh"), server: server).login(email: user.email, password: user.password).pantry
            // And the server no longer takes either's token (as when it expired)
            for pantry in [old, fresh] {
                let token = try #require(pantry.device.accounts.vault.accessToken)
                let link = ServerLink(serverURL: server, timeouts: .patient) { token }
                guard case .noContent = try await link.client.logout() else { throw TestFailure("logout") }
            }
            for folder in ["stale", "fresh"] {
                let pantry = CommandProcess.pantry(dataDirectory: scratch.folder(folder), server: server)
                // When a sync is refused with 401
                let sync = try await pantry.run(["sync"])
                #expect(sync.isOneLineError && sync.stderr.contains("sign-in (it ended or was signed out): sign in again"), "\(folder): \(sync.stderr)")
                // Then whoami still names the person, and status says they must sign in again online, never "Not signed in"
                #expect(try await pantry.run(["whoami"]).stdout.hasPrefix(user.username + " "))
                let status = try await pantry.run(["status"])
                let said = status.stdout + status.stderr
                #expect(said.contains("sign in again") || said.contains("sign-in"), "\(folder): \(said)")
                #expect(said.contains("pantry login --email \(user.email)") && !said.contains("Not signed in"), "\(folder): \(said)")
            }
            // And the device still within its offline week says so in JSON too
            let phone = CommandProcess.pantry(dataDirectory: scratch.folder("fresh"), server: server)
            #expect(try jsonObject(try await phone.run(["status", "--json"]))["mustSignInAgain"] as? Bool == true)
            // And one that signs in again is back to normal
            #expect(try await phone.run(["login", "--email", user.email, "--password-stdin"], input: user.password + "\n").status == 0)
            #expect(try jsonObject(try await phone.run(["status", "--json"]))["mustSignInAgain"] as? Bool == false)
        }
    }

    @Test func mistakesAreSaidInTheWordsTypedAsUsageMistakes() async throws {
        try await withLiveServer { server, scratch in
            let (pantry, _) = try await signedInProcess(server, scratch)
            #expect(try await pantry.run(["add", "--name", "Tea"]).status == 0)
            let id = try #require(try jsonItems(try await pantry.run(["list", "--json"])).first?["id"] as? String)
            let cases: [(arguments: [String], says: String)] = [
                // A quantity is echoed as typed, not as Swift rewrote it
                (["add", "--name", "Rice", "--quantity", "1e20"], "'1e20' is not a quantity"),
                (["add", "--name", "Rice", "--quantity", "0"], "'0' is not a quantity"),
                (["consume", id, "--quantity", "0.0001"], "'0.0001' is not a quantity"),
                // NB: kept as typed and shown as 0.002 before: a quantity counts in thousandths.
                (["add", "--name", "Rice", "--quantity", "0.0015"], "'0.0015' is not a quantity: use a number from 0.001 to 1000000, to 3 decimals at most"),
                (["consume", id, "--quantity", "1.2345"], "'1.2345' is not a quantity"),
                (["add", "--name", "Rice", "--quantity", "abc"], "'abc' is not a quantity"),
                // A negative value is the option's value, refused for what it is
                (["edit", id, "--expires", "-2d"], "'-2d' is not an expiry"),
                (["scan", "4006381333931", "--pick", "-1"], "--pick -1 is not a candidate"),
                (["vote", "4006381333931", "--rating", "1", "--pick", "-1"], "--pick -1 is not a candidate"),
                // An empty id is said as such
                (["show", ""], "The item's id is empty"),
                (["consume", " "], "The item's id is empty"),
                // An edit that changes nothing is refused, not said done
                (["edit", id], "Nothing to change: give --name"),
                // ArgumentParser's question ends its sentence
                (["add", "--name", "Rice", "--categry", "grains"], "Did you mean '--category'? See 'pantry add --help'"),
            ]
            for (arguments, says) in cases {
                let outcome = try await pantry.run(arguments)
                #expect(outcome.isOneLineError && outcome.status == 64, "\(arguments): \(outcome.status) \(outcome.stderr)")
                #expect(outcome.stderr.contains(says), "\(arguments): \(outcome.stderr)")
                #expect(!outcome.stderr.contains("Missing value") && !outcome.stderr.contains("  ") && !outcome.stderr.contains("?."),
                        "\(arguments): \(outcome.stderr)")
            }
            // And nothing was changed by the refused edit
            #expect(try jsonObject(try await pantry.run(["show", id, "--json"]))["name"] as? String == "Tea")
        }
    }

    @Test func textTypedWrongIsAUsageMistakeAsInSpendiq() async throws {
        try await withLiveServer { server, scratch in
            let (pantry, _) = try await signedInProcess(server, scratch)
            let long = String(repeating: "a", count: 10_000)
            let cases: [(arguments: [String], says: String)] = [
                (["add", "--name", "Tea\tTime"], "The name contains a tab"),
                (["add", "--name", "Tea\nTime"], "The name contains a line break"),
                (["add", "--name", ""], "A name cannot be empty"),
                (["add", "--name", "   "], "A name cannot be empty"),
                (["add", "--name", long], "The name is longer than"),
                (["add", "--name", "Tea", "--category", long], "The category is longer than"),
                (["scan", "4006381333931", "--new", "--name", ""], "needs a name"),
                (["register", "--username", "shorty_1", "--email", "shorty@example.com", "--password-stdin"], "Password must be"),
            ]
            for (arguments, says) in cases {
                let outcome = try await pantry.run(arguments, input: "short\n")
                #expect(outcome.isOneLineError && outcome.status == 64, "\(arguments.prefix(3)): \(outcome.status) \(outcome.stderr.prefix(200))")
                #expect(outcome.stderr.contains(says), "\(arguments.prefix(3)): \(outcome.stderr.prefix(200))")
            }
            #expect(try jsonItems(try await pantry.run(["list", "--json"])).isEmpty)
        }
    }
}
