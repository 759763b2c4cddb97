import Foundation
import Testing
@testable import Recycling

/// What `sustainu scan` says of a barcode: each part of a packaging with its own bin, and, for a
/// product the server knows whose packaging it does not, the server's reason, not "No item detected".
@Suite("What a barcode scan says", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct ScanAnswerTests {
    /// In the Open Food Facts sample, with no packaging columns filled in.
    static let spreadWithoutPackaging = "0000101209159"

    @Test func eachPartOfAPackagingIsNamedWithItsBin() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            _ = try await phone.signUp()
            // When a student scans the puff pastry: a paper film, a cardboard sleeve, a plastic film
            let text = try await phone.run(["scan", "--barcode", SharedData.pastryBarcode])
            // Then the answer names the product's bin, and each part's, the plastic film apart
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.stdout.hasPrefix("Cardboard Box → the grey bin"), "\(text.stdout)")
            let lines = text.stdout.split(separator: "\n").map(String.init)
            #expect(lines.contains { $0.hasPrefix("  plastic (film") && $0.hasSuffix("→ the blue bin (glass, plastic and metal)") }, "\(text.stdout)")
            #expect(lines.contains { $0.hasPrefix("  cardboard (") && $0.hasSuffix("→ the grey bin (paper and cardboard)") }, "\(text.stdout)")
            // And the JSON lists the parts with their bins
            let scan = try #require(try json(try await phone.run(["scan", "--barcode", SharedData.pastryBarcode, "--json"])) as? [String: Any])
            let parts = try #require(scan["parts"] as? [[String: Any]])
            #expect(parts.map { $0["bin"] as? String }.sorted { ($0 ?? "") < ($1 ?? "") } == ["blue", "grey", "grey"], "\(parts)")
            // And offline, the saved catalogue names the parts the same way
            let offline = try await phone.offline(["scan", "--barcode", SharedData.pastryBarcode])
            #expect(offline.stdout.contains("offline guess") && offline.stdout.contains("→ the blue bin"), "\(offline.stdout)")
        }
    }

    @Test func aKnownProductWithUnknownPackagingIsNotNoItemDetected() async throws {
        try await withLiveServer { server, scratch in
            let database = scratch.url.appendingPathComponent("server.sqlite").path
            let imported = try await BuiltExecutable.run("eventual-server", [
                "import-products", SharedData.folder.appendingPathComponent("off-products-1000-slim.csv").path, "--database", database])
            #expect(imported.status == 0, "\(imported.stderr)")
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            _ = try await phone.signUp()
            // When a student scans a product the server knows, whose packaging nobody declared
            let text = try await phone.run(["scan", "--barcode", Self.spreadWithoutPackaging])
            let scan = try #require(try json(try await phone.run(["scans", "--json"])) as? [[String: Any]]).first
            // Then the command says what the server said, and how to try a photo, not "No item detected"
            #expect(text.status == 0, "\(text.stderr)")
            #expect(!text.stdout.contains("No item detected"), "\(text.stdout)")
            let message = try #require(scan?["message"] as? String)
            #expect(text.stdout.hasPrefix(message) && text.stdout.contains("sustainu scan --image PHOTO"), "\(text.stdout)")
            #expect(scan?["detected"] as? Bool == false && scan?["trashType"] is NSNull)
        }
    }
}
