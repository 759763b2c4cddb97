import EventualAPI
import EventualKit
import Foundation
import Testing
@testable import Recycling

/// What a person who had read only the docs found in a week with SustainU: refusals told apart by
/// reason, advice that does not go in a circle, a point shown without counting a visit, and usage
/// mistakes told by their exit status.
@Suite("sustainu as a stranger used it for a week", .timeLimit(.minutes(4)), .tags(.endToEnd))
struct SustainUWeekTests {
    @Test func syncCountsWhatItSentAndGroupsRefusalsByReason() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let folder = scratch.folder("phone")
            let phone = Phone(dataDirectory: folder, server: server)
            let (email, _) = try await phone.signUp()
            // Given two scans refused as taken 40 days ago, and one photo the server cannot classify
            var configuration = RecyclingConfiguration(dataDirectory: folder, serverURL: server)
            configuration.scanBudget = .seconds(20)
            configuration.localCommandSyncBudget = .seconds(20)
            let old = Date(timeIntervalSinceNow: -40 * 86_400)
            _ = try await RecyclingApp(configuration: configuration).accounts.signIn(email: email, password: "long-password")
            for _ in 0..<2 { _ = try await RecyclingApp(configuration: configuration).open().scan(barcode: SharedData.pastryBarcode, now: old) }
            #expect(try await phone.run(["scan", "--image", try plainPhoto(in: scratch.folder("camera")).path]).status == 1)
            // And, made offline, one scan the server takes and one it refuses as too old
            var offline = configuration
            offline.serverURL = unreachableServer
            _ = try await RecyclingApp(configuration: offline).open().scan(barcode: SharedData.pastryBarcode)
            _ = try await RecyclingApp(configuration: offline).open().scan(barcode: SharedData.pastryBarcode, now: old)
            // When the student syncs
            let sync = try await phone.run(["sync"])
            // Then it counts both sent, says which the server took, and each reason once with its count
            #expect(sync.status == 1)
            #expect(sync.stdout.contains("Sent 2 scans or visits: the server took 1 and refused 1."), "\(sync.stdout)")
            #expect(sync.stderr.contains("4 scans or visits were refused by the server: taken more than 30 days ago (3), "
                                         + "this server cannot classify photos (1)."), "\(sync.stderr)")
            // And never the wire's field names
            #expect(!sync.stderr.contains("takenAt"), "\(sync.stderr)")
            let status = try await phone.run(["status"])
            #expect(!status.stdout.contains("takenAt") && status.stdout.contains("The server refused 4 scans or visits"), "\(status.stdout)")
        }
    }

    @Test func aScanSentByItsOwnCommandIsALastSyncNotNever() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let setup = Phone(dataDirectory: scratch.folder("setup"), server: server)
            let (email, _) = try await setup.signUp()
            // Given a device signed in without a first sync (as an app whose sign-in was cut short)
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            let configuration = RecyclingConfiguration(dataDirectory: phone.dataDirectory, serverURL: server)
            _ = try await RecyclingApp(configuration: configuration).accounts.signIn(email: email, password: "long-password")
            #expect(try await phone.run(["status"]).stdout.contains("last sync never"))
            // When a scan is sent by the command that made it
            let scan = try await phone.run(["scan", "--barcode", SharedData.pastryBarcode])
            #expect(scan.status == 0, "\(scan.stderr)")
            // Then status says it synced then, not "never" (it said never before)
            let status = try await phone.run(["status"])
            #expect(status.stdout.contains("last sync just now"), "\(status.stdout)")
        }
    }

    @Test func aSyncIsRecordedAsTheLastSync() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            _ = try await phone.signUp()
            // When the student syncs
            let sync = try await phone.run(["sync"])
            #expect(sync.status == 0, "\(sync.stdout)\(sync.stderr)")
            // Then status says when, as pantry and spendiq do
            let status = try await phone.run(["status"])
            #expect(status.stdout.contains("last sync just now"), "\(status.stdout)")
            let shape = try #require(try json(try await phone.run(["status", "--json"])) as? [String: Any])
            #expect(shape["lastSyncAt"] is String, "\(shape)")
        }
    }

    @Test func aSignInTheServerRefusedIsSaidAsSuchWhileWhoamiNamesThePerson() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let folder = scratch.folder("phone")
            let phone = Phone(dataDirectory: folder, server: server)
            let (email, username) = try await phone.signUp()
            // Given the last online sign-in 8 days ago, and a token the server no longer takes
            var configuration = RecyclingConfiguration(dataDirectory: folder, serverURL: server)
            configuration.clock = { UnixMillis.now() - 8 * 86_400_000 }
            let signedIn = try await RecyclingApp(configuration: configuration).login(email: email, password: "long-password")
            let token = try #require(signedIn.recycling.device.accounts.vault.accessToken)
            let link = ServerLink(serverURL: server, timeouts: .patient) { token }
            guard case .noContent = try await link.client.logout() else { throw TestFailure("logout") }
            // When a scan is refused with 401
            _ = try await phone.run(["scan", "--barcode", SharedData.pastryBarcode])
            _ = try await phone.run(["sync"])
            // Then whoami names the person, and status says to sign in again online, not "Not signed in"
            #expect(try await phone.run(["whoami"]).stdout.hasPrefix(username + " "))
            let status = try await phone.run(["status"])
            #expect(status.isOneLineError && status.stderr.contains("sign in again online with `sustainu login --email \(email)`"),
                    "\(status.stdout)\(status.stderr)")
            #expect(!status.stderr.contains("Not signed in"))
        }
    }

    @Test func statusSaysWhenTheServerRefusedTheSignInWithinTheOfflineWeek() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let folder = scratch.folder("phone")
            let phone = Phone(dataDirectory: folder, server: server)
            let (email, _) = try await phone.signUp()
            // Given a token the server no longer takes
            let app = RecyclingApp(configuration: RecyclingConfiguration(dataDirectory: folder, serverURL: server))
            let token = try #require(try await app.open().device.accounts.vault.accessToken)
            let link = ServerLink(serverURL: server, timeouts: .patient) { token }
            guard case .noContent = try await link.client.logout() else { throw TestFailure("logout") }
            // When a scan is refused with 401
            _ = try await phone.run(["scan", "--barcode", SharedData.pastryBarcode])
            _ = try await phone.run(["sync"])
            // Then status says to sign in again online, in text and JSON
            let status = try await phone.run(["status"])
            #expect(status.stdout.contains("until you run `sustainu login --email \(email)`"), "\(status.stdout)\(status.stderr)")
            #expect(try #require(try json(try await phone.run(["status", "--json"])) as? [String: Any])["mustSignInAgain"] as? Bool == true)
        }
    }

    @Test func aPhotoWithABarcodeIsAnsweredByTheBarcodeAndAdviceDoesNotGoInACircle() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            _ = try await phone.signUp()
            // Given a server that cannot classify photos, and a photo of a product whose packaging it does not know
            let photo = try barcodePhoto(SharedData.unknownBarcode, in: scratch.folder("camera"))
            // When the student scans the photo
            let scan = try await phone.run(["scan", "--image", photo.path])
            // Then the barcode read from it gets the server's answer, with no suggestion of a photo or a barcode
            #expect(scan.status == 0 && scan.stderr.isEmpty, "\(scan.stdout)\(scan.stderr)")
            #expect(scan.stdout.contains("not known"), "\(scan.stdout)")
            #expect(!scan.stdout.contains("--image") && !scan.stdout.contains("scan the barcode"), "\(scan.stdout)")
            // And nothing waits refused for a retry that cannot succeed
            let status = try #require(try json(try await phone.run(["status", "--json"])) as? [String: Any])
            #expect(status["failed"] as? Int == 0, "\(status)")
            // When the student scans the barcode alone, no photo is suggested: the server said it cannot classify one
            let barcode = try await phone.run(["scan", "--barcode", SharedData.unknownBarcode])
            #expect(barcode.status == 0 && !barcode.stdout.contains("--image"), "\(barcode.stdout)")
            // And a photo with nothing to read is refused once, on stderr only
            let plain = try await phone.run(["scan", "--image", try plainPhoto(in: scratch.folder("camera")).path])
            #expect(plain.isOneLineError && plain.stderr.contains("cannot classify photos"), "\(plain.stdout)\(plain.stderr)")
        }
    }

    @Test func showingAPointCountsNoVisitAndAVisitSaysWhenItIsQueued() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            _ = try await phone.signUp()
            let pointID = try #require(try pointsJSON(try await phone.run(["points", "--json", "--limit", "1"])).first?["id"] as? String)
            // When the student looks at a point twice
            #expect(try await phone.run(["point", pointID]).status == 0)
            let shown = try #require(try json(try await phone.run(["point", pointID, "--json"])) as? [String: Any])
            // Then no visit is counted
            #expect(shown["visits"] as? Int == 0, "\(shown)")
            // When the student says they are there, online and then offline
            let online = try await phone.run(["visit", pointID])
            #expect(online.status == 0 && online.stdout.contains("is counted (1 visit in all)"), "\(online.stdout)\(online.stderr)")
            let offline = try await phone.offline(["visit", pointID])
            #expect(offline.status == 0 && offline.stdout.contains("saved on this device: it is counted when the server can be reached"),
                    "\(offline.stdout)\(offline.stderr)")
        }
    }

    @Test func aMalformedServerOrAccountDetailIsAUsageMistake() async throws {
        try await withLiveServer { server, scratch in
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            for url in ["not-a-url", "ftp://x", "", "http://127.0.0.1:0"] {
                let run = try await phone.run(["--server", url, "points"])
                // (in the words of the other apps: one shared SettingError)
                #expect(run.status == 64 && run.isOneLineError && run.stderr.hasPrefix("sustainu: '\(url)' is not a server URL: use http://HOST:PORT, with a port from 1 to 65535."),
                        "\(url): \(run.stderr)")
            }
            #expect(try await phone.run(["--data-dir", "", "status"]).status == 64)
            let mistakes: [([String], String)] = [
                (["--username", "ann", "--email", "ann@"], "long-password\n"), (["--username", "", "--email", "ann@example.com"], "long-password\n"),
                (["--username", "ann_b", "--email", "ann@example.com"], "12345\n"), (["--username", "ann😀", "--email", "ann@example.com"], "long-password\n"),
            ]
            for (arguments, password) in mistakes {
                let run = try await phone.run(["register"] + arguments + ["--password-stdin"], input: password)
                #expect(run.status == 64 && run.isOneLineError, "\(arguments): \(run.status) \(run.stderr)")
                let first = try #require(run.stderr.dropFirst("sustainu: ".count).first)
                #expect(first.isUppercase, "\(run.stderr)")
            }
        }
    }
}

/// What is printed and typed: a full disk, numbers out of range, the scans table, what was typed echoed.
@Suite("sustainu's output and input after a stranger's week", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct SustainUOutputTests {
    @Test func aFullDiskLimitsTheScansTableAndEchoedInput() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            _ = try await phone.signUp()
            #expect(try await phone.run(["score"]).status == 0)
            // A full disk on standard output is one line and status 1, never a silent success
            let environment = ["SUSTAINU_DATA_DIR": phone.dataDirectory.path, "SUSTAINU_SERVER": server.absoluteString]
            for arguments in [["score"], ["scans", "--json"]] {
                let full = try await BuiltExecutable.run("/bin/sh", ["-c", "\"$0\" \"$@\" > /dev/full", BuiltExecutable.path("sustainu")] + arguments,
                                                    environment: environment)
                #expect(full.status == 1 && full.stderr.contains("Cannot write to standard output"), "\(arguments): \(full.stderr)")
                #expect(full.stderr.split(separator: "\n").count == 1, "\(full.stderr)")
            }
            // A negative limit is out of range, not a missing value
            let points = try await phone.run(["points", "--limit", "-1"])
            #expect(points.status == 64 && points.stderr.contains("1 to 1000") && points.stderr.contains("not -1"), "\(points.stderr)")
            let board = try await phone.run(["leaderboard", "--limit", "-1"])
            #expect(board.status == 64 && board.stderr.contains("1 to 100 people"), "\(board.stderr)")
            // An empty barcode says so; a pasted one with spaces is taken
            let empty = try await phone.run(["scan", "--barcode", ""])
            #expect(empty.status == 64 && empty.stderr.contains("The barcode is empty"), "\(empty.stderr)")
            #expect(try await phone.run(["scan", "--barcode", " \(SharedData.unknownBarcode) "]).status == 0)
            // The scans table: an answer that could not say what it is reads "unknown", with its
            // barcode; a long note takes the width the other columns leave
            #expect(try await phone.run(["scan", "--image", try plainPhoto(in: scratch.folder("camera")).path]).status == 1)
            let table = try await phone.run(["scans"], columns: 80)
            let lines = table.stdout.split(separator: "\n")
            let unknown = try #require(lines.first { $0.contains("unknown") }, "\(table.stdout)")
            #expect(unknown.contains("barcode"), "\(table.stdout)")
            #expect(lines.map(\.count).max() == 80, "\(table.stdout)")
            // Ids typed wrong are echoed cut and with their tabs shown, and said of scans or visits
            let long = try await phone.run(["point", "node/" + String(repeating: "9", count: 60) + "\tx"])
            #expect(long.isOneLineError && long.stderr.contains("'node/999") && long.stderr.contains("…'") && !long.stderr.contains("\t"),
                    "\(long.stderr)")
            let short = try await phone.run(["discard", "abc"])
            #expect(short.status == 64 && short.stderr.contains("too short to pick a scan or visit"), "\(short.stderr)")
            let unknownID = try await phone.run(["discard", "zzzzzzzz"])
            #expect(unknownID.isOneLineError && unknownID.stderr.contains("No refused scan or visit 'zzzzzzzz'"), "\(unknownID.stderr)")
            // Far from every saved point, the list says so
            let far = try await phone.offline(["points", "--near", "-33.9,151.2", "--limit", "1"])
            #expect(far.stdout.contains("No saved point is within 50 km of you: the nearest is"), "\(far.stdout)")
        }
    }
}
