import EventualAPI
import EventualKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Recycling

/// What the `sustainu` command records reaches the server once and answers the product team's
/// questions; `--no-analytics` records nothing.
@Suite("SustainU's usage events", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct SustainUAnalyticsTests {
    @Test func theCommandsRecordWhatTheQuestionsNeedAndTheOptOutRecordsNothing() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            let (email, _) = try await phone.signUp()
            // Given a student who opens the map from the navigation bar, then a point from its
            // link, scans a product, reads a tip and opens the 10:00 reminder, partly offline
            let points = try pointsJSON(try await phone.run(["points", "--json", "--limit", "1"]))
            let pointID = try #require(points.first?["id"] as? String)
            #expect(try await phone.offline(["point", pointID]).status == 0)
            #expect(try await phone.offline(["visit", pointID]).status == 0)
            #expect(try await phone.offline(["scan", "--barcode", SharedData.pastryBarcode]).status == 0)
            #expect(try await phone.run(["tips", "Glass Bottle"]).status == 0)
            #expect(try await phone.run(["reminders", "--now", "10:05", "--open"]).status == 0)
            // And who then uses the map with analytics turned off
            #expect(try await phone.run(["points", "--no-analytics"]).status == 0)
            #expect(try await phone.run(["sync"]).status == 0)
            // When the product team asks the server
            let granted = try await BuiltExecutable.run("eventual-server", [
                "user", "grant-admin", email, "--database", scratch.url.appendingPathComponent("server.sqlite").path])
            #expect(granted.status == 0, "\(granted.stderr)")
            let admin = try await AdminReader(server: server, email: email)
            // Then each event counts once: one entry from the navbar, one from a point's link
            #expect(try await admin.rows("map-entry-sources").map { Array($0.prefix(2)) }.sorted { "\($0)" < "\($1)" }
                    == [["main", "1"], ["navbar", "1"]])
            #expect(try await admin.rows("most-visited-points").first?.first == pointID)
            let features = Dictionary(uniqueKeysWithValues: try await admin.rows("scan-vs-tips").map { ($0[0], $0[1]) })
            #expect(features["scan"] == "1" && features["tips"] == "1", "\(features)")
            #expect(try await admin.rows("most-recycled-trash-types").first?.prefix(2) == ["Cardboard Box", "1"])
            let reminder = try await admin.rows("daily-reminder-effectiveness")
            #expect(!reminder.isEmpty, "\(reminder)")
        }
    }
}

/// Reads the analytics answers as an admin, over plain HTTP.
struct AdminReader {
    let server: URL
    let token: String

    init(server: URL, email: String) async throws {
        self.server = server
        var request = URLRequest(url: server.appendingPathComponent("auth/login"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: ["email": email, "password": "long-password"])
        let (data, _) = try await URLSession.shared.data(for: request)
        let body = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        token = try #require(body["accessToken"] as? String)
    }

    /// The answer's rows, each value as text.
    func rows(_ question: String) async throws -> [[String]] {
        var request = URLRequest(url: server.appendingPathComponent("v1/analytics/\(question)"))
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(String(decoding: data, as: UTF8.self))")
        let body = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let rows = try #require(body["rows"] as? [[Any]])
        return rows.map { $0.map { value in
            if let number = value as? NSNumber, !(value is Bool) { return number.stringValue }
            return "\(value)"
        } }
    }
}
