import Foundation
import Testing
@testable import Recycling

/// How `sustainu` takes what a person types: every malformed argument is one line and exit
/// status 64, before anything is saved; positions in the southern and western hemispheres are
/// positions.
@Suite("sustainu's arguments", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct CommandLineUsageTests {
    @Test func everyMalformedArgumentIsAUsageMistake() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let phone = Phone(dataDirectory: scratch.folder("phone"), server: unreachableServer)
        let malformed: [[String]] = [
            ["tips", "wood"], ["scan", "--barcode", "123"], ["scan", "--barcode", ""], ["scan"], ["scan", "--barcode", "3250390017165", "--point", " "],
            ["scan", "--barcode", "3250390017165", "--at", "200,1"], ["point", ""], ["points", "--limit", "0"], ["points", "--limit", "-1"],
            ["points", "--limit", "1.5"], ["points", "--near", "91,0"], ["points", "--near", "nan,0"], ["points", "--material", "wood"],
            ["points", "--json", "--geojson"], ["scan", "--image", ""], ["leaderboard", "--limit", "0"], ["reminders", "--now", "25:00"],
            ["reminders", "--now", "2026-02-30T20:00"], ["reminders", "--now", "tomorrow"], ["status", "--bogus"], ["nonsense"],
        ]
        for arguments in malformed {
            let run = try await phone.run(arguments)
            #expect(run.status == 64 && run.isOneLineError, "\(arguments): \(run.status) \(run.stdout)\(run.stderr)")
        }
    }

    @Test func southernAndWesternPositionsAreAccepted() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            _ = try await phone.signUp()
            _ = try await phone.run(["points", "--limit", "1"])
            // When a student in Sydney or Santiago asks, in every way an option can be typed
            for arguments in [["points", "--near", "-33.9,151.2"], ["points", "--near=-33.9,151.2"], ["points", "--near", "-33.45,-70.66", "--json"],
                              ["scan", "--barcode", SharedData.pastryBarcode, "--at", "-33.9,151.2"]] {
                let run = try await phone.offline(arguments)
                // Then the position is taken
                #expect(run.status == 0, "\(arguments): \(run.stderr)")
            }
            // And the distances are measured from there (Salzburg is about 16,000 km from Sydney)
            let far = try pointsJSON(try await phone.offline(["points", "--near", "-33.9,151.2", "--json", "--limit", "1"]))
            #expect((far.first?["distanceMeters"] as? Double ?? 0) > 15_000_000, "\(far)")
            // And a list cut at its limit says so, in the text and in the JSON (with the saved copy's age)
            let text = try await phone.offline(["points", "--near", "-33.9,151.2"])
            #expect(text.stdout.contains("The 10 nearest of 360 saved points: --limit N shows more"), "\(text.stdout)")
            let shape = try #require(try json(try await phone.offline(["points", "--json"])) as? [String: Any])
            #expect(shape["total"] as? Int == 360 && shape["savedCopy"] as? Bool == true && shape["fetchedAt"] is String, "\(shape.keys)")
            // And a map of the points takes the same filters, and alone holds every saved point
            let map = try #require(try json(try await phone.offline(["points", "--geojson", "--near", "47.8,13.04", "--material", "glass", "--limit", "3"]))
                                   as? [String: Any])
            let features = try #require(map["features"] as? [[String: Any]], "\(map.keys)")
            #expect(features.count == 3, "\(features.count) features")
            let all = try #require(try json(try await phone.offline(["points", "--geojson"])) as? [String: Any])
            #expect((all["features"] as? [Any])?.count == 360)
        }
    }

    @Test func outputFitsEightyColumns() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            _ = try await phone.signUp()
            let point = try pointsJSON(try await phone.run(["points", "--json", "--limit", "1"])).first?["id"] as? String
            _ = try await phone.run(["score"])
            // When a student on an 80-column terminal (or piping into another command) uses the app
            let commands: [[String]] = [
                ["scan", "--barcode", SharedData.pastryBarcode], ["scans"], ["points", "--limit", "20"], ["tips"], ["score"], ["leaderboard"],
                ["point", try #require(point)], ["reminders", "--now", "10:05"], ["status"], ["--help"], ["scan", "--help"],
            ]
            for arguments in commands {
                for run in [try await phone.run(arguments, columns: 80), try await phone.offline(arguments, columns: 80)] {
                    // Then every line fits
                    #expect(run.status == 0, "\(arguments): \(run.stderr)")
                    let wide = run.stdout.split(separator: "\n").filter { $0.count > 80 }
                    #expect(wide.isEmpty, "\(arguments): \(wide)")
                }
            }
            // And a table's long cells are cut with "…", not wrapped
            let scans = try await phone.run(["scans"], columns: 40)
            #expect(scans.stdout.contains("…") && scans.stdout.split(separator: "\n").allSatisfy { $0.count <= 40 }, "\(scans.stdout)")
        }
    }

    @Test func aScanAtAPointThePhoneDoesNotKnowIsRefusedBeforeItIsSaved() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            _ = try await phone.signUp()
            let run = try await phone.offline(["scan", "--barcode", SharedData.pastryBarcode, "--point", "node/nowhere"])
            #expect(run.isOneLineError && run.stderr.contains("No recycling point 'node/nowhere'"), "\(run.stderr)")
            #expect(try #require(try json(try await phone.offline(["scans", "--json"])) as? [Any]).isEmpty)
            // And a photo piped in is read from standard input, and named so when it is none
            let piped = try await phone.offline(["scan", "--image", "-"], input: "not a photo\n")
            #expect(piped.isOneLineError && piped.stderr.contains("the photo on standard input: it is not a JPEG, PNG or HEIC photo"), "\(piped.stderr)")
        }
    }
}
