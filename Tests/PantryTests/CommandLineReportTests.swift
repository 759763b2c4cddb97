import Foundation
import Testing
@testable import Pantry

/// What the `pantry` executable prints about items, the outbox and a sync.
@Suite("The pantry command's reports", .timeLimit(.minutes(2)), .tags(.endToEnd))
struct CommandLineReportTests {
    @Test func hugeQuantityFromElsewhereIsPrintedWithoutACrash() async throws {
        try await withLiveServer { server, scratch in
            let (pantry, _) = try await signedInProcess(server, scratch)
            let added = try await pantry.run(["add", "--name", "Rice", "--where", "Coop"])
            #expect(added.status == 0)
            // Given a quantity no command accepts, as an older app on another device could sync it
            let local = try await device(pantry.dataDirectory, server: unreachableServer).open()
            try await local.store.write { tx in try tx.db.execute(sql: "UPDATE pantry_items SET quantity = 1e308") }
            // When it is listed, searched, shown, consumed and reminded of
            for arguments in [["list"], ["list", "--json"], ["search", "rice"], ["reminders"], ["places"]] {
                let outcome = try await pantry.run(arguments, server: unreachableServer)
                // Then nothing traps
                #expect(outcome.status == 0, "\(arguments): \(outcome.stderr)")
            }
            #expect(try await pantry.run(["list"], server: unreachableServer).stdout.contains("1e+308"))
            let id = try #require(try jsonItems(try await pantry.run(["list", "--json"], server: unreachableServer)).first?["id"] as? String)
            #expect(try await pantry.run(["show", id], server: unreachableServer).stdout.contains("1e+308"))
            #expect(try await pantry.run(["consume", id, "--quantity", "1"], server: unreachableServer).status == 0)
        }
    }

    @Test func showSaysTheStatusInWords() async throws {
        try await withLiveServer { server, scratch in
            let (pantry, _) = try await signedInProcess(server, scratch)
            _ = try await pantry.run(["add", "--name", "Milk"])
            _ = try await pantry.run(["add", "--name", "Fish"])
            let items = try jsonItems(try await pantry.run(["list", "--json", "--sort", "name"]))
            let fish = try #require(items.first?["id"] as? String), milk = try #require(items.last?["id"] as? String)
            #expect(try await pantry.run(["show", milk]).stdout.contains("status    in the pantry\n"))
            _ = try await pantry.run(["consume", milk])
            _ = try await pantry.run(["remove", fish])
            let consumed = try await pantry.run(["show", milk]).stdout
            #expect(consumed.contains("status    consumed\n"))
            #expect(try await pantry.run(["show", fish]).stdout.contains("status    thrown away\n"))
            #expect(!consumed.contains("inPantry"))
            // And the JSON keeps the machine's word
            #expect(try jsonObject(try await pantry.run(["show", fish, "--json"]))["status"] as? String == "thrownAway")
        }
    }

    @Test func statusRowsCarryTheItemId() async throws {
        try await withLiveServer { server, scratch in
            let (pantry, _) = try await signedInProcess(server, scratch)
            let added = try await pantry.run(["add", "--name", "Bread"], server: unreachableServer)
            #expect(added.status == 0)
            let id = try #require(try jsonItems(try await pantry.run(["list", "--json"], server: unreachableServer)).first?["id"] as? String)
            let table = try await pantry.run(["status"], server: unreachableServer).stdout.split(separator: "\n").map(String.init)
            #expect(table.contains { $0.hasPrefix("STATE") && $0.contains("ID") })
            #expect(table.contains { $0.hasPrefix("pending") && $0.contains(String(id.suffix(8))) && $0.contains("item Bread") })
            let entries = try #require(try jsonObject(try await pantry.run(["status", "--json"], server: unreachableServer))["entries"] as? [[String: Any]])
            #expect(entries.map { $0["recordId"] as? String } == [id])
        }
    }

    @Test func syncCountsOnlyWhatReallyTravelled() async throws {
        try await withLiveServer { server, scratch in
            // Given a change made offline
            let (phone, email) = try await signedInProcess(server, scratch, folder: "phone")
            _ = try await phone.run(["add", "--name", "Bread"], server: unreachableServer)
            // When it is synced, the pull brings it back: that echo is not news
            let first = try await phone.run(["sync"])
            #expect(first.stdout == "Synced: sent 1 change(s) and 0 knowledge-base contribution(s), fetched 0.\n", "\(first.stderr)")
            // And a change from another device is
            let tablet = CommandProcess.pantry(dataDirectory: scratch.folder("tablet"), server: server)
            #expect(try await tablet.run(["login", "--email", email, "--password-stdin"], input: "long-password\n").stdout.contains("Fetched 1"))
            let id = try #require(try jsonItems(try await tablet.run(["list", "--json"])).first?["id"] as? String)
            #expect(try await tablet.run(["edit", id, "--category", "bakery"]).status == 0)
            _ = try await tablet.run(["sync"])
            let second = try await phone.run(["sync"])
            #expect(second.stdout == "Synced: sent 0 change(s) and 0 knowledge-base contribution(s), fetched 1.\n", "\(second.stderr)")
            let again = try await phone.run(["sync"])
            #expect(again.stdout.hasSuffix("fetched 0.\n"))
        }
    }

    @Test func geojsonSaysOnStderrHowManyPlacesHadNoPosition() async throws {
        try await withLiveServer { server, scratch in
            let (pantry, _) = try await signedInProcess(server, scratch)
            _ = try await pantry.run(["add", "--name", "Tea", "--where", "Coop", "--at", "44.4949,11.3426"])
            _ = try await pantry.run(["add", "--name", "Jam", "--where", "Market"])
            let places = try await pantry.run(["places", "--geojson", "-"])
            #expect(places.status == 0)
            let features = try #require(try jsonObject(places)["features"] as? [[String: Any]])
            #expect(features.count == 1)
            #expect(places.stderr == "1 place(s) had no position and are not in the GeoJSON: add one with --at LATITUDE,LONGITUDE.\n")
        }
    }

    @Test func geojsonNeverWritesOverAFileUnlessForcedNorOverADevice() async throws {
        try await withLiveServer { server, scratch in
            // Given a place with a position, and a file that is already there, and a link to it
            let (pantry, _) = try await signedInProcess(server, scratch)
            _ = try await pantry.run(["add", "--name", "Tea", "--where", "Coop", "--at", "44.4949,11.3426"])
            let file = scratch.url.appendingPathComponent("my notes.json")
            try Data("keep me".utf8).write(to: file)
            let link = scratch.url.appendingPathComponent("link.json")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
            // When it is written there without --force, or to a device or a folder
            for path in [file.path, link.path, "/dev/full", scratch.url.path] {
                let refused = try await pantry.run(["places", "--geojson", path])
                // Then it is refused in one line, and the file is untouched
                #expect(refused.isOneLineError && refused.stderr.contains(path), "\(path): \(refused.stderr)")
            }
            #expect(try String(contentsOf: file, encoding: .utf8) == "keep me")
            // And with --force it writes through the link, which stays a link
            #expect(try await pantry.run(["places", "--geojson", link.path, "--force"]).status == 0)
            #expect(try String(contentsOf: file, encoding: .utf8).contains("FeatureCollection"))
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == file.path)
        }
    }
}
