import CommandLineSupport
import Foundation
import Testing

/// What every app's command shares (CommandLineSupport): positions south and west of zero as
/// values, output that fits the terminal, `--json` keys always there, one time format.
@Suite("Command-line layout and arguments", .timeLimit(.minutes(2)))
struct CommandLineLayoutTests {
    @Test func negativeCoordinatePairsBecomeValuesAndNothingElseChanges() {
        let arguments = ["add", "--at", "-33.9,151.2", "--quantity", "-5", "-33.9, -70.5", "--json", "-h", "-.5,3", "--", "-1,2"]
        #expect(NegativeCoordinates.asValues(arguments)
            == ["add", "--at", " -33.9,151.2", "--quantity", "-5", " -33.9, -70.5", "--json", "-h", " -.5,3", "--", "-1,2"])
        #expect(NegativeCoordinates.asValues(["--at=-33.9,151.2", "-33.9", "-a,b", "-1,2,3"]) == ["--at=-33.9,151.2", "-33.9", "-a,b", "-1,2,3"])
    }

    @Test func aTableFitsTheWidthAndCutsItsWidestCells() {
        var table = Table("STATE", "ID", "WHAT", "REASON")
        table.add("failed", "0123abcd", "item " + String(repeating: "Very long name ", count: 10),
                  "hlc 1780000000000-00000-abc is 3599 s ahead of the server's clock (at most 300 s allowed): check the device's clock")
        table.add("pending", "89abcdef", "item Milk", "-")
        let lines = table.render(width: 80).split(separator: "\n")
        #expect(lines.count == 3)
        for line in lines { #expect(line.count <= 80, "\(line.count): \(line)") }
        #expect(lines[1].contains("…"))
        #expect(lines[1].hasPrefix("failed   0123abcd  item Very long name"))
        // And a narrow table is left as it is
        var narrow = Table("A", "B")
        narrow.add("one", "two\tthree")
        #expect(narrow.render(width: 80) == "A    B\none  two three")
    }

    @Test func proseWrapsAtSpaces() {
        let text = "Synced: sent 3 change(s) and 0 knowledge-base contribution(s), fetched 12. 2 refused by the server."
        let lines = Terminal.wrap(text, width: 30).split(separator: "\n")
        #expect(lines.allSatisfy { $0.count <= 30 }, "\(lines)")
        #expect(lines.joined(separator: " ") == text)
    }

    @Test func jsonKeysAreAlwaysThereAndTimesAreUTC() throws {
        struct Shape: Encodable {
            @JSONNullable var lastSyncAt: String?
            @JSONNullable var count: Int?
        }
        let json = try Terminal.json(Shape(lastSyncAt: nil, count: 3))
        #expect(json.contains(#""lastSyncAt" : null"#), "\(json)")
        #expect(json.contains(#""count" : 3"#), "\(json)")
        #expect(Timestamp.iso8601(1_780_000_000_123) == "2026-05-28T20:26:40Z")
    }

    @Test(.tags(.endToEnd)) func pantryTakesSouthernPositionsAndSaysMalformedValuesWith64() async throws {
        try await withLiveServer { server, scratch in
            // Given a signed-in device
            let (pantry, _) = try await signedInProcess(server, scratch)
            // When an item is bought in Sydney, the option's value written either way
            #expect(try await pantry.run(["add", "--name", "Kelp", "--at", "-33.9,151.2"]).status == 0)
            #expect(try await pantry.run(["add", "--name", "Mate", "--at=-34.6,-58.4"]).status == 0)
            // Then the positions are kept as typed
            let items = try jsonItems(try await pantry.run(["list", "--json", "--sort", "name"]))
            #expect(items.map { $0["latitude"] as? Double } == [-33.9, -34.6])
            #expect(items.map { $0["longitude"] as? Double } == [151.2, -58.4])
            // And a value that cannot be one is a usage mistake (64), said without the added space
            let wrong = try await pantry.run(["add", "--name", "Kelp", "--at", "-33.9,999"])
            #expect(wrong.status == 64 && wrong.stderr.contains("'-33.9,999' is not a position"), "\(wrong.stderr)")
            for arguments in [["scan", "123"], ["vote", "4006381333931", "--rating", "9"], ["list", "--expiring", "soon"]] {
                let outcome = try await pantry.run(arguments, server: unreachableServer)
                #expect(outcome.status == 64 && outcome.isOneLineError, "\(arguments): \(outcome.status) \(outcome.stderr)")
            }
        }
    }

    @Test(.tags(.endToEnd)) func pantryFitsTheTerminalAndItsJSONHasEveryKey() async throws {
        try await withLiveServer { server, scratch in
            // Given an item with a long name bought at a place with no position
            let (pantry, _) = try await signedInProcess(server, scratch)
            let name = "Extra virgin olive oil from the hills above the lake, first cold pressing, 2026 harvest"
            #expect(try await pantry.run(["add", "--name", name, "--where", "Coop, Via Roma 1", "--category", "Oils and vinegars",
                                          "--expires", "tomorrow"]).status == 0)
            // (sent, so that no row is marked as waiting: a command waits only 300 ms for the server)
            _ = try await pantry.run(["sync"])
            // When it is listed in 40 columns, and piped with no COLUMNS
            for (columns, width) in [("40", 40), ("", 80)] {
                let list = try await pantry.run(["list"], environment: ["COLUMNS": columns])
                // Then every line fits, the long name cut with "…"
                let lines = list.stdout.split(separator: "\n")
                #expect(lines.count == 2 && lines.allSatisfy { $0.count <= width }, "\(list.stdout)")
                #expect(list.stdout.contains("…"))
                if width == 80 {
                    // And in 80 columns the date and every header stay whole: the place, the category, then the name give way
                    #expect(lines.first.map { $0.contains("CATEGORY") && $0.contains("EXPIRES") && !$0.contains("…") } == true, "\(list.stdout)")
                    #expect(list.stdout.contains("(tomorrow)"), "\(list.stdout)")
                }
            }
            // And the JSON of a place without a position still has its keys, as null
            let places = try #require(try JSONSerialization.jsonObject(with: Data(try await pantry.run(["places", "--json"]).stdout.utf8)) as? [[String: Any]])
            #expect(places.first?.keys.sorted() == ["count", "incomplete", "latitude", "longitude", "name"])
            #expect(places.first?["latitude"] is NSNull)
            // And times are ISO 8601 in UTC
            let bought = try #require(try jsonItems(try await pantry.run(["list", "--json"])).first?["boughtAt"] as? String)
            #expect(bought.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/) != nil, "\(bought)")
        }
    }
}
