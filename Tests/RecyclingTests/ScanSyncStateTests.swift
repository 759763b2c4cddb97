import Foundation
import Testing
@testable import Recycling

/// Each scan's sync state through the real `sustainu` command and a real server: marked while it
/// waits or after a refusal, carried in `--json`, settled with the same words as the other apps,
/// and watched live.
@Suite("sustainu shows each scan's sync state and settles refusals", .timeLimit(.minutes(4)), .tags(.endToEnd))
struct ScanSyncStateTests {
    @Test func aWaitingScanIsMarkedAndARefusedOneIsSettled() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            _ = try await phone.signUp()
            // Given a barcode scan made offline
            #expect(try await phone.offline(["scan", "--barcode", SharedData.pastryBarcode]).status == 0)
            // Then the list marks it waiting, with a legend, and the JSON says so
            let waiting = try await phone.offline(["scans"])
            #expect(waiting.stdout.contains("⋯ waits to be sent"), "\(waiting.stdout)")
            let pending = try #require(try json(try await phone.offline(["scans", "--json"])) as? [[String: Any]])
            let state = try #require(pending.first?["syncState"] as? [String: Any], "\(pending)")
            #expect(state["state"] as? String == "pending" && state["count"] as? Int == 1, "\(state)")
            // When it is sent, and a photo scan is refused by a server that cannot classify photos
            #expect(try await phone.run(["sync"]).status == 0)
            let photo = try plainPhoto(in: scratch.folder("camera"))
            #expect(try await phone.run(["scan", "--image", photo.path]).status == 1)
            // Then the list marks the refused one, and failures names it with the server's words
            let list = try await phone.run(["scans"])
            #expect(list.stdout.contains("! refused by the server: sustainu failures"), "\(list.stdout)")
            let states = try #require(try json(try await phone.run(["scans", "--json"])) as? [[String: Any]]).compactMap { $0["syncState"] as? [String: Any] }
            #expect(Set(states.compactMap { $0["state"] as? String }) == ["failed", "confirmed"], "\(states)")
            let failures = try #require(try json(try await phone.run(["failures", "--json"])) as? [[String: Any]])
            let id = try #require(failures.first?["shortId"] as? String)
            #expect(failures.count == 1 && (failures.first?["reason"] as? String)?.contains("cannot classify photos") == true, "\(failures)")
            // And settle takes the same words as the other apps: theirs does not exist for a scan, one choice only
            for arguments in [["settle", id, "--take-theirs"], ["settle", id], ["settle", id, "--keep-mine", "--discard"]] {
                let refused = try await phone.run(arguments)
                #expect(refused.status == 64 && refused.isOneLineError, "\(arguments): \(refused.stderr)")
            }
            let kept = try await phone.run(["settle", id, "--keep-mine"])
            #expect(kept.isOneLineError && kept.status == 1 && kept.stderr.hasPrefix("sustainu: The server refused the scan of a photo again: ")
                    && kept.stderr.hasSuffix(" (`sustainu failures` lists it)\n"), "\(kept.stderr)")
            let dropped = try await phone.run(["settle", id, "--discard"])
            #expect(dropped.status == 0 && dropped.stdout.contains("Dropped the refused scan of a photo"), "\(dropped.stderr)")
            #expect(try await phone.run(["failures"]).stdout == "Nothing was refused.\n")
            #expect(!(try await phone.run(["scans"])).stdout.contains("!"))
        }
    }

    @Test func watchReprintsWhenAWaitingScanIsAnsweredAndEndsCleanlyOnSIGINT() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            _ = try await phone.signUp()
            // Given a scan made offline
            #expect(try await phone.offline(["scan", "--barcode", SharedData.pastryBarcode]).status == 0)
            // When the list is watched online until SIGINT
            let outcome = try await BuiltExecutable.run("/usr/bin/timeout", [
                "--preserve-status", "-s", "INT", "12", BuiltExecutable.path("sustainu"), "scans", "--watch", "--json", "--every", "1",
            ], environment: ["SUSTAINU_DATA_DIR": scratch.folder("phone").path, "SUSTAINU_SERVER": server.absoluteString, "SUSTAINU_ANSWER_TIMEOUT": "5"])
            // Then it printed the scan waiting, then classified, one JSON document a line, and ended with status 0
            #expect(outcome.status == 0, "\(outcome.status) \(outcome.stderr)")
            let documents = try outcome.stdout.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [[String: Any]] ?? [] }
            let states = documents.compactMap { ($0.first?["syncState"] as? [String: Any])?["state"] as? String }
            #expect(states.first == "pending" && states.last == "confirmed", "\(outcome.stdout)")
        }
    }
}
