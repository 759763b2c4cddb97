import EventualAPI
import Foundation
import HTTPTypes
import Testing
@testable import EventualServer

@Suite("Recycling scans: barcode classification, replays, the daily cap, streaks", .timeLimit(.minutes(3)))
struct RecyclingScanTests {
    /// A cardboard-heavy product of the real packaging file (its parts: paper film, cardboard sleeve, plastic film).
    static let pastry = "3250390017165"

    private func withCatalogue(_ backend: Backend, configure: (inout ServerConfiguration) -> Void = { _ in },
                               _ test: @Sendable (API, DatabaseLocation) async throws -> Void) async throws {
        try await withServer(backend, configure: configure) { api, location in
            try await RecyclingData.withDatabase(location) { database in
                _ = try await PackagingImporter(database: database).importCSV(at: RecyclingData.packaging)
                _ = try await PointImporter(database: database).importGeoJSON(at: RecyclingData.salzburg)
            }
            try await test(api, location)
        }
    }

    @Test(arguments: Backend.available)
    func aKnownBarcodeIsClassifiedByItsPackagingAndAReplayAwardsNothingTwice(_ backend: Backend) async throws {
        try await withCatalogue(backend) { api, _ in
            let account = try await api.signUp("scanner")
            // When a barcode the catalogue knows is scanned
            let first = try await api.scan("scan-1", as: account, barcode: Self.pastry)
            #expect(first.status == .ok, "\(first.text)")
            let result = try first.decode(ScanJSON.self)
            // Then its heaviest part names the type and the bin, each part is listed, and it earns 50
            #expect(result.detected && result.source == "barcode")
            #expect(result.trashType == "Cardboard Box" && result.bin == "grey")
            #expect(result.binLabel == Bin.grey.label)
            #expect(result.parts?.map(\.material) == ["paper", "cardboard", "plastic"])
            #expect(result.points == 50)
            // When the same scan id is sent again, even with another barcode
            let replay = try await api.scan("scan-1", as: account, barcode: "3250390020745")
            // Then the first result comes back and nothing more is awarded
            #expect(try replay.decode(ScanJSON.self) == result)
            let score = try await api.score(as: account)
            #expect(score.total == 50 && score.today == 50 && score.awardedScansToday == 1 && score.dailyCap == 20)
            // And the product look-up carries the packaging too
            let products = try await api.send(.get, "/products?barcode=\(Self.pastry)", headers: account.bearer)
            #expect(products.status == .ok)
        }
    }

    @Test(arguments: Backend.available)
    func twoConcurrentReplaysOfOneScanAwardOnce(_ backend: Backend) async throws {
        try await withCatalogue(backend) { api, _ in
            let account = try await api.signUp("twins")
            let answers = try await withThrowingTaskGroup(of: Answer.self) { group in
                for _ in 0..<4 {
                    group.addTask { try await api.scan("same-scan", as: account, barcode: Self.pastry) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.status == .ok }, "\(answers.map(\.text))")
            let results = try answers.map { try $0.decode(ScanJSON.self) }
            #expect(results.allSatisfy { $0 == results[0] && $0.points == 50 })
            #expect(try await api.score(as: account).total == 50)
        }
    }

    @Test(arguments: Backend.available)
    func theTwentyFirstScanOfADayEarnsNothingButIsStillClassified(_ backend: Backend) async throws {
        try await withCatalogue(backend) { api, _ in
            let account = try await api.signUp("eager")
            // Twenty scans 30 hours ago in Bogotá
            let first = Date().addingTimeInterval(-30 * 3600)
            for index in 1...20 {
                let answer = try await api.scan("cap-\(index)", as: account, takenAt: first.addingTimeInterval(Double(index)),
                                                timeZone: "America/Bogota", barcode: Self.pastry)
                #expect(try answer.decode(ScanJSON.self).points == 50)
            }
            // When a 21st scan is made within the same 24 hours
            let extra = try await api.scan("cap-21", as: account, takenAt: first.addingTimeInterval(60),
                                           timeZone: "America/Bogota", barcode: Self.pastry)
            let result = try extra.decode(ScanJSON.self)
            // Then it is classified, earns 0 and says why
            #expect(result.detected && result.bin == "grey" && result.points == 0)
            #expect(result.message.contains("20 scans a day"))
            // And once those 24 hours are over, a scan earns again
            let later = try await api.scan("cap-22", as: account, takenAt: Date(), timeZone: "America/Bogota", barcode: Self.pastry)
            #expect(try later.decode(ScanJSON.self).points == 50)
            let score = try await api.score(as: account, timeZone: "America/Bogota")
            #expect(score.total == 21 * 50)
            #expect(score.days.map(\.points).reduce(0, +) == 21 * 50)
            #expect(score.awardedScansToday == 1)
        }
    }

    @Test(arguments: Backend.available)
    func theTimeZoneARequestNamesDoesNotMoveThePersonsDay(_ backend: Backend) async throws {
        try await withCatalogue(backend) { api, _ in
            let account = try await api.signUp("zones")
            // Given twenty awarded scans at one instant, sent as UTC
            let instant = Date().addingTimeInterval(-3600)
            for index in 1...20 {
                let answer = try await api.scan("z-\(index)", as: account, takenAt: instant, timeZone: "UTC", barcode: Self.pastry)
                #expect(try answer.decode(ScanJSON.self).points == 50)
            }
            // When the same instant is sent as the time zones furthest behind and ahead, then as scans
            // an hour earlier and later (out of order, as a device offline sends them)
            var points: [Int] = []
            for (index, zone) in ["Etc/GMT+12", "Pacific/Kiritimati", "Etc/GMT-14", "Pacific/Pago_Pago"].enumerated() {
                let answer = try await api.scan("moved-\(index)", as: account, takenAt: instant, timeZone: zone, barcode: Self.pastry)
                points.append(try answer.decode(ScanJSON.self).points)
            }
            for (index, offset) in [-3600.0, -23 * 3600.0, 1800.0].enumerated() {
                let answer = try await api.scan("shifted-\(index)", as: account, takenAt: instant.addingTimeInterval(offset),
                                                timeZone: "Pacific/Kiritimati", barcode: Self.pastry)
                points.append(try answer.decode(ScanJSON.self).points)
            }
            // Then none earns: 20 scans in any 24 hours is the cap, whatever the zone
            #expect(points == Array(repeating: 0, count: 7))
            #expect(try await api.score(as: account, timeZone: "Pacific/Kiritimati").total == 20 * 50)
            #expect(try await api.score(as: account, timeZone: "Etc/GMT%2B12").awardedScansToday == 20)
        }
    }

    @Test func theCapHoldsInEveryWindowWhateverTheOrderOfArrival() {
        let hour: Int64 = 3_600_000
        // Ten at hour 0 and ten at hour 20: a scan at hour 10 would put 21 in [0, 24)
        let awarded = Array(repeating: Int64(0), count: 10) + Array(repeating: 20 * hour, count: 10)
        #expect(!ScanStore.capAllows(awarded, adding: 10 * hour))
        // At hour 25 the window [1, 25] holds only the ten at hour 20
        #expect(ScanStore.capAllows(awarded, adding: 25 * hour))
        // One earlier than everything, at hour -5: [-5, 19) holds eleven, so it earns
        #expect(ScanStore.capAllows(awarded, adding: -5 * hour))
        // Exactly 24 hours after the first ten is a new window
        #expect(ScanStore.capAllows(Array(repeating: 0, count: 20), adding: 24 * hour))
        #expect(!ScanStore.capAllows(Array(repeating: 0, count: 20), adding: 24 * hour - 1))
    }

    /// Two users scan at the same UTC instants, one in Bogotá (UTC−5) and one in Tokyo (UTC+9).
    /// Tokyo's "today" starts at T0. The instants are 13:00 and 15:00 Tokyo time yesterday
    /// (T0 − 11 h and T0 − 9 h), which in Bogotá are 23:00 and 01:00 across its midnight.
    /// - Tokyo: both on yesterday, today has none yet: streak 1, best 1.
    /// - Bogotá: two consecutive local days; the later one is Bogotá's today or yesterday
    ///   (Bogotá's date turns 14 h after Tokyo's), so the streak is 2 either way, best 2.
    @Test(arguments: Backend.available)
    func streaksFollowTheLocalDaysOfEachUsersTimeZoneAcrossMidnight(_ backend: Backend) async throws {
        try await withCatalogue(backend) { api, _ in
            var tokyoCalendar = Calendar(identifier: .gregorian)
            tokyoCalendar.timeZone = TimeZone(identifier: "Asia/Tokyo")!
            let tokyoToday = tokyoCalendar.startOfDay(for: Date())
            let instants = [tokyoToday.addingTimeInterval(-11 * 3600), tokyoToday.addingTimeInterval(-9 * 3600)]
            let tokyo = try await api.signUp("tokyo"), bogota = try await api.signUp("bogota")
            for (index, instant) in instants.enumerated() {
                let t = try await api.scan("t\(index)", as: tokyo, takenAt: instant, timeZone: "Asia/Tokyo", barcode: Self.pastry)
                let b = try await api.scan("b\(index)", as: bogota, takenAt: instant, timeZone: "America/Bogota", barcode: Self.pastry)
                #expect(t.status == .ok && b.status == .ok, "\(t.text) \(b.text)")
            }
            let tokyoScore = try await api.score(as: tokyo, timeZone: "Asia/Tokyo")
            let bogotaScore = try await api.score(as: bogota, timeZone: "America/Bogota")
            #expect(tokyoScore.streak == 1 && tokyoScore.bestStreak == 1)
            #expect(bogotaScore.streak == 2 && bogotaScore.bestStreak == 2)
            #expect(tokyoScore.today == 0)
            #expect(tokyoScore.days.last?.points == 0 && tokyoScore.days.dropLast().last?.points == 100)
            #expect(tokyoScore.days.count == 30 && bogotaScore.days.count == 30)
            #expect(tokyoScore.total == 100 && bogotaScore.total == 100)
            // And the days are Tokyo's calendar days, oldest first
            let formatter = DateFormatter()
            formatter.calendar = tokyoCalendar
            formatter.timeZone = tokyoCalendar.timeZone
            formatter.dateFormat = "yyyy-MM-dd"
            #expect(tokyoScore.days.last?.day == formatter.string(from: Date()))
            #expect(tokyoScore.days.map(\.day) == tokyoScore.days.map(\.day).sorted())
        }
    }

    @Test(arguments: Backend.available)
    func anUnknownBarcodeWithoutAPhotoIsStoredAsNotDetectedWithAMessage(_ backend: Backend) async throws {
        try await withCatalogue(backend) { api, _ in
            let account = try await api.signUp("unknown")
            let answer = try await api.scan("u-1", as: account, barcode: Barcodes.unique())
            let result = try answer.decode(ScanJSON.self)
            #expect(!result.detected && result.points == 0 && result.bin == nil && result.trashType == nil)
            #expect(result.message.contains("packaging is not known yet"))
            #expect(try await api.scan("u-1", as: account, barcode: Self.pastry).decode(ScanJSON.self) == result)
        }
    }

    @Test func aPhotoWithoutAModelIs422AndNothingIsStored() async throws {
        try await withCatalogue(.sqlite) { api, _ in
            let account = try await api.signUp("nomodel")
            let answer = try await api.scan("p-1", as: account, photo: RecyclingData.png)
            #expect(answer.status == .unprocessableContent)
            #expect(try answer.error().message == "This server cannot classify photos; scan the barcode instead")
            // A photo with an unknown barcode is the same; with a known one the barcode answers
            let unknown = try await api.scan("p-1", as: account, barcode: Barcodes.unique(), photo: RecyclingData.png)
            #expect(unknown.status == .unprocessableContent)
            let known = try await api.scan("p-1", as: account, barcode: Self.pastry, photo: RecyclingData.png)
            #expect(try known.decode(ScanJSON.self).source == "barcode")
        }
    }

    @Test func badScansAre400sAnd413sNever500s() async throws {
        try await withCatalogue(.sqlite) { api, _ in
            let account = try await api.signUp("hostile")
            let gif = Data("GIF89a".utf8) + Data(repeating: 0, count: 32)
            let cases: [(String, Answer, HTTPResponse.Status, String)] = [
                ("gif", try await api.scan("b-1", as: account, photo: gif), .badRequest, "JPEG or a PNG"),
                ("huge photo", try await api.scan("b-2", as: account, photo: Data([0xFF, 0xD8, 0xFF]) + Data(count: 4 * 1024 * 1024)),
                 .contentTooLarge, "4 MiB"),
                ("no barcode, no photo", try await api.scan("b-3", as: account), .badRequest, "barcode or a photo"),
                ("NUL in id", try await api.scan("b\u{0}4", as: account, barcode: Self.pastry), .badRequest, "id"),
                ("long id", try await api.scan(String(repeating: "x", count: 129), as: account, barcode: Self.pastry), .badRequest, "id"),
                ("time zone", try await api.scan("b-5", as: account, timeZone: "Mars/Olympus", barcode: Self.pastry), .badRequest, "timeZone"),
                ("check digit", try await api.scan("b-6", as: account, barcode: "3250390017166"), .badRequest, "check digit"),
                ("future", try await api.scan("b-7", as: account, takenAt: Date().addingTimeInterval(3600), barcode: Self.pastry),
                 .badRequest, "future"),
                ("old", try await api.scan("b-8", as: account, takenAt: Date().addingTimeInterval(-40 * 86_400), barcode: Self.pastry),
                 .badRequest, "days ago"),
                ("half a position", try await api.send(.post, "/v1/recycling/scans", headers: account.bearer,
                    json: #"{"id":"b-9","takenAt":"2026-01-01T00:00:00Z","barcode":"3250390017165","latitude":1}"#), .badRequest, "latitude"),
                ("not base64", try await api.send(.post, "/v1/recycling/scans", headers: account.bearer,
                    json: #"{"id":"b-10","takenAt":"\#(API.timestamp(Date()))","photo":"%%%"}"#), .badRequest, "base64"),
            ]
            for (name, answer, status, words) in cases {
                #expect(answer.status == status, "\(name): \(answer.text)")
                #expect(try answer.error().message.contains(words), "\(name): \(answer.text)")
            }
            #expect(try await api.send(.post, "/v1/recycling/scans", json: #"{"id":"x","takenAt":"2026-01-01T00:00:00Z"}"#).status == .unauthorized)
            #expect(try await api.score(as: account).total == 0)
            let zone = try await api.send(.get, "/v1/recycling/me?timeZone=Nowhere%2FAtAll", headers: account.bearer)
            #expect(zone.status == .badRequest)
        }
    }

    @Test func theScanPathTakesA4MiBPhotoInBase64WhileOtherPathsStayAt1MiB() async throws {
        try await withServer(.sqlite, mode: .live) { api in
            let account = try await api.signUp("bigphoto")
            // A 4 MiB JPEG in base64 is about 5.6 MB of JSON: accepted by the scan path (422: no model here)
            let photo = Data([0xFF, 0xD8, 0xFF]) + Data(repeating: 7, count: 4 * 1024 * 1024 - 3)
            let big = try await api.scan("big", as: account, photo: photo)
            #expect(big.status == .unprocessableContent, "\(big.text.prefix(200))")
            // Over 6 MiB is refused at the edge
            let tooBig = try await api.send(.post, "/v1/recycling/scans", headers: account.bearer,
                                            json: #"{"id":"x","pad":""# + String(repeating: "a", count: 6 * 1024 * 1024) + #""}"#)
            #expect(tooBig.status == .contentTooLarge)
            // And another path still refuses 2 MiB
            let elsewhere = try await api.send(.post, "/v1/recycling/points/node%2F1/visits", headers: account.bearer,
                                               json: #"{"visitId":""# + String(repeating: "a", count: 2 * 1024 * 1024) + #""}"#)
            #expect(elsewhere.status == .contentTooLarge)
        }
    }

    @Test(arguments: Backend.available)
    func theScoreboardShowsUsernamesAndTotalsOnlyHighestFirstTiesByUsername(_ backend: Backend) async throws {
        try await withCatalogue(backend) { api, _ in
            var accounts: [Account] = []
            for (index, scans) in [3, 1, 3, 2].enumerated() {
                let account = try await api.signUp("board\(index)")
                for scan in 0..<scans {
                    _ = try await api.scan("s\(scan)", as: account, barcode: Self.pastry)
                }
                accounts.append(account)
            }
            let answer = try await api.send(.get, "/v1/recycling/scoreboard?limit=3", headers: accounts[0].bearer)
            #expect(answer.status == .ok)
            #expect(!answer.text.contains("@"), "no email")
            struct Board: Decodable { struct Entry: Decodable { let username: String; let total: Int64 }; let entries: [Entry] }
            let entries = try answer.decode(Board.self).entries
            let tied = [accounts[0].username, accounts[2].username].sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            #expect(entries.map(\.username) == tied + [accounts[3].username])
            #expect(entries.map(\.total) == [150, 150, 100])
            #expect(try await api.send(.get, "/v1/recycling/scoreboard?limit=0", headers: accounts[0].bearer).status == .badRequest)
            #expect(try await api.send(.get, "/v1/recycling/scoreboard").status == .unauthorized)
        }
    }
}
