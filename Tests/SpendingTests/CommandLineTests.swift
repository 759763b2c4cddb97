import EventualServer
import Foundation
import Testing
@testable import Spending

@Suite("The spendiq command", .timeLimit(.minutes(4)), .tags(.endToEnd))
struct CommandLineTests {
    /// A device with a verified person signed in through the executable, and Monaco's shops on the server.
    static func signedIn(_ server: URL, _ scratch: ScratchFolder) async throws -> CommandProcess {
        let database = try await serverDatabase(scratch)
        _ = try await ShopImporter(database: database).importGeoJSON(at: SampleData.file("osm-shops-monaco.geojson"), demoOffers: true)
        await database.close()
        let device = CommandProcess.spendiq(dataDirectory: scratch.folder("cli"), server: server)
        _ = try await device.signUp(name: "cli") { email in
            let verified = try await device.run(["verify", try mailedCode(scratch, to: email)])
            #expect(verified.status == 0, "\(verified.stderr)")
            #expect(verified.stdout == "Email confirmed. Now: spendiq login --email \(email)\n")
        }
        return device
    }

    @Test func everyListingHasItsJSONFormAndGlobalOptionsGoAnywhere() async throws {
        try await withLiveServer { server, scratch in
            let device = try await Self.signedIn(server, scratch)
            let elsewhere = ["SPENDIQ_DATA_DIR": "/nonexistent-\(UUID().uuidString)", "SPENDIQ_SERVER": "http://127.0.0.1:1"]
            // Options before the subcommand, after it, and between its arguments
            #expect(try await device.run(["--data-dir", device.dataDirectory.path, "accounts", "add", "Cash", "--currency", "EUR",
                                          "--server", server.absoluteString], environment: elsewhere).status == 0)
            let added = try await device.run(["add", "--data-dir", device.dataDirectory.path, "expense", "12.50", "--account", "Cash",
                                              "--category", "food", "--at", "43.7394,7.4278"], environment: ["SPENDIQ_DATA_DIR": "/nonexistent"])
            #expect(added.status == 0, "\(added.stderr)")
            #expect(added.stdout.hasPrefix("Recorded expense EUR 12.50 on food ("))
            let list = try #require(try await device.run(["list", "--json"]).json() as? [[String: Any]])
            #expect(list.count == 1)
            #expect(Set(list[0].keys).isSuperset(of: ["id", "account", "kind", "amountMinor", "currency", "category", "note", "date"]))
            #expect(list[0]["amountMinor"] as? Int == 1250 && list[0]["account"] as? String == "Cash" && list[0]["currency"] as? String == "EUR")
            let dashboard = try #require(try await device.run(["dashboard", "--json"]).json() as? [String: Any])
            let last30 = try #require(dashboard["last30Days"] as? [[String: Any]])
            #expect(last30.first?["currency"] as? String == "EUR" && last30.first?["spentMinor"] as? Int == 1250 && last30.first?["receivedMinor"] as? Int == 0)
            let accounts = try #require(dashboard["accounts"] as? [[String: Any]])
            #expect(accounts.first?["name"] as? String == "Cash" && accounts.first?["balanceMinor"] as? Int == -1250)
            #expect(try await device.run(["locate", "43.7394,7.4278"]).status == 0)
            let offers = try #require(try await device.run(["offers", "--json", "--radius", "500"]).json() as? [String: Any])
            #expect(offers["savedCopy"] as? Bool == false && offers["fetchedAt"] is String)
            let items = try #require(offers["offers"] as? [[String: Any]])
            #expect(!items.isEmpty && items.allSatisfy { ($0["distanceMeters"] as? Int ?? 9999) <= 500 && $0["featured"] is Bool && $0["name"] is String && $0["id"] is String })
        }
    }

    @Test func errorsAreOneLineWithANonZeroStatus() async throws {
        try await withLiveServer { server, scratch in
            let device = try await Self.signedIn(server, scratch)
            _ = try await device.run(["accounts", "add", "Cash", "--currency", "EUR"])
            let badAmount = try await device.run(["add", "expense", "1e308", "--account", "Cash"])
            #expect(badAmount.isOneLineError && badAmount.status == 64, "\(badAmount.stderr)")
            let unknownOption = try await device.run(["list", "--colour", "red"])
            #expect(unknownOption.isOneLineError && unknownOption.status == 64, "\(unknownOption.stderr)")
            let nul = try await device.run(["add", "expense", "3", "--account", "Cash", "--note", "a\u{01}b"])
            #expect(nul.isOneLineError && nul.status == 64, "\(nul.stderr)")
            let noAccount = try await device.run(["add", "expense", "3", "--account", "Nowhere"])
            #expect(noAccount.isOneLineError && noAccount.stderr.contains("No account 'Nowhere'"))
            let down = try await device.run(["sync"], environment: ["SPENDIQ_SERVER": unreachableServer.absoluteString])
            #expect(down.isOneLineError && down.stderr.hasPrefix("spendiq: Sync stopped: No connection to"), "\(down.stderr)")
            // Local commands answer at once offline
            let offline = try await device.run(["add", "income", "5", "--account", "Cash"], environment: ["SPENDIQ_SERVER": unreachableServer.absoluteString])
            #expect(offline.status == 0, "\(offline.stderr)")
            let noOffers = try await CommandProcess.spendiq(dataDirectory: device.dataDirectory, server: unreachableServer).run(["offers", "--near", "43.7394,7.4278"])
            #expect(noOffers.isOneLineError && noOffers.stderr == "spendiq: Connect to load offers near you\n", "\(noOffers.stderr)")
        }
    }

    @Test func everySubcommandHasHelp() async throws {
        let device = CommandProcess.spendiq(dataDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("help-\(UUID().uuidString)"),
                                    server: unreachableServer)
        for command in [["register"], ["verify"], ["login"], ["logout"], ["whoami"], ["accounts"], ["accounts", "add"], ["accounts", "edit"],
                        ["accounts", "archive"], ["add"], ["transfer"], ["list"], ["edit"], ["delete"], ["dashboard"], ["offers"],
                        ["offers", "show"], ["locate"], ["insights"], ["limits"], ["limits", "set"], ["limits", "remove"], ["export"],
                        ["import"], ["status"], ["sync"]] {
            let help = try await device.run(command + ["--help"])
            #expect(help.status == 0 && help.stdout.contains("USAGE"), "\(command): \(help.stderr)")
        }
    }
}
