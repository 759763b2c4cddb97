import BarcodeImages
import Foundation
import Testing
@testable import Pantry

/// The `pantry` executable against a live server: output, `--json` and exit statuses.
@Suite("The pantry command", .timeLimit(.minutes(2)), .tags(.endToEnd))
struct CommandLineTests {
    /// A signed-in device for a fresh user.
    func signedIn(_ server: URL, _ scratch: ScratchFolder) async throws -> CommandProcess {
        try await signedInProcess(server, scratch).pantry
    }

    func items(_ outcome: CommandOutcome) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [[String: Any]])
    }

    @Test func addListShowConsumeEditRemove() async throws {
        try await withLiveServer { server, scratch in
            let pantry = try await signedIn(server, scratch)
            // When items are added
            let added = try await pantry.run(["add", "--name", "Yogurt", "--expires", "+2d", "--category", "dairy", "--quantity", "4",
                                              "--where", "Coop, Via Roma 1", "--at", "44.4949,11.3426"])
            #expect(added.status == 0)
            #expect(added.stdout.hasPrefix("Added Yogurt"))
            _ = try await pantry.run(["add", "--name", "Salt"])
            // (sent, so that no row is marked as waiting: a command waits only 300 ms for the server)
            _ = try await pantry.run(["sync"])
            // Then the table is aligned, soonest expiry first, with a relative date
            let table = try await pantry.run(["list"])
            let lines = table.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 3)
            #expect(lines[0].hasPrefix("ID"))
            #expect(lines[1].contains("Yogurt") && lines[1].contains("(in 2 days)"))
            // (columns aligned: a name starts under NAME)
            #expect(lines[1].firstRange(of: "Yogurt")?.lowerBound.utf16Offset(in: lines[1]) == lines[0].firstRange(of: "NAME")?.lowerBound.utf16Offset(in: lines[0]))
            // And the JSON carries every documented field
            let json = try items(try await pantry.run(["list", "--json"]))
            #expect(json.count == 2)
            let yogurt = try #require(json.first)
            for key in ["id", "barcode", "name", "quantity", "unit", "category", "expiresOn", "boughtAt", "place"] {
                #expect(yogurt.keys.contains(key), "missing \(key)")
            }
            #expect(yogurt["quantity"] as? Double == 4)
            #expect(yogurt["barcode"] is NSNull)
            let id = try #require(yogurt["id"] as? String)
            let short = String(id.suffix(8))
            // When some is eaten, edited, shown and thrown away
            #expect(try await pantry.run(["consume", short, "--quantity", "1"]).stdout.contains("3 left"))
            #expect(try await pantry.run(["edit", short, "--category", "breakfast"]).status == 0)
            let shown = try await pantry.run(["show", short, "--json"])
            let shownItem = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
            #expect(shownItem["category"] as? String == "breakfast")
            #expect(try await pantry.run(["list", "--expiring", "3d", "--json"]).stdout.contains("Yogurt"))
            #expect(try await pantry.run(["remove", short]).status == 0)
            #expect(try items(try await pantry.run(["list", "--json"])).map { $0["name"] as? String } == ["Salt"])
            // And places remembers where it was bought
            let places = try await pantry.run(["places", "--geojson", "-"])
            #expect(places.stdout.contains("FeatureCollection") && places.stdout.contains("Coop, Via Roma 1"))
        }
    }

    @Test func scanOnlineOfflineAndSync() async throws {
        try await withLiveServer { server, scratch in
            let pantry = try await signedIn(server, scratch)
            // Online: a new product, then the same barcode picked
            let created = try await pantry.run(["scan", Barcodes.pasta, "--new", "--name", "Penne", "--expires", "2030-01-02"])
            #expect(created.status == 0, "\(created.stderr)")
            // (a command waits at most 300 ms for the server: on a busy machine the post waits for the sync)
            #expect(created.stdout.contains("Posted the new product") || created.stdout.contains("waits"))
            #expect(try await pantry.run(["sync"]).status == 0)
            let picked = try await pantry.run(["scan", Barcodes.pasta, "--pick", "1"])
            #expect(picked.stdout.contains("Added Penne"))
            // A pick past the candidates says what there is: one, or none at all (not "pick 1 to 0")
            let second = try await pantry.run(["scan", Barcodes.pasta, "--pick", "2"])
            #expect(second.stderr.contains("There is no candidate 2: there is one, --pick 1"), "\(second.stderr)")
            let none = try await pantry.run(["scan", "2000000000015", "--pick", "1"])
            #expect(none.isOneLineError && none.stderr.contains("has none for this barcode (add it with --new --name NAME)"), "\(none.stderr)")
            #expect(try await pantry.run(["sync"]).status == 0)
            // Offline: an unknown barcode is one clear line and exit 1
            let unknown = try await pantry.run(["scan", Barcodes.coffee], server: unreachableServer)
            #expect(unknown.status == 1)
            #expect(unknown.stderr == "pantry: No connection and no saved copy of 5000112548167: connect once to look it up, or add it with --new\n")
            #expect(unknown.stdout.isEmpty)
            // Offline: the known one still scans, and the vote waits
            let known = try await pantry.run(["scan", Barcodes.pasta, "--pick", "1"], server: unreachableServer)
            #expect(known.status == 0, "\(known.stderr)")
            let status = try await pantry.run(["status", "--json"], server: unreachableServer)
            let shape = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
            #expect(shape["connectivity"] as? String == "offline")
            #expect(shape["pending"] as? Int == 2)
            #expect(try await pantry.run(["sync"], server: unreachableServer).status == 1)
            // Back online: sync sends it all
            let synced = try await pantry.run(["sync"])
            #expect(synced.status == 0)
            #expect(synced.stdout.contains("sent 1 change(s) and 1 knowledge-base contribution(s)"))
            let statusText = try await pantry.run(["status"]).stdout
            #expect(statusText.contains("pending 0, failed 0"))
            // And it says how another device's change reaches this one
            #expect(statusText.contains("changes made elsewhere: live in `pantry list --watch`, else at each sync"), "\(statusText)")
            // And search finds the three Penne items
            #expect(try items(try await pantry.run(["search", "pen", "--json"])).count == 3)
        }
    }

    @Test func scanReadsTheBarcodeFromAPhoto() async throws {
        try await withLiveServer { server, scratch in
            let pantry = try await signedIn(server, scratch)
            // A photo on standard input (`-`, as sustainu scan --image takes one) is read and named as such
            let pgm = scratch.url.appendingPathComponent("label.pgm")
            try EAN13Drawing.pgm(Barcodes.milk).write(to: pgm)
            let photo = scratch.url.appendingPathComponent("label.jpg")
            try GreyImage(contentsOf: pgm).jpeg(quality: 85).write(to: photo)
            let scanned = try await pantry.run(["scan", "--image", "-", "--new", "--name", "Milk"], stdinFrom: photo.path)
            #expect(scanned.status == 0, "\(scanned.stderr)")
            #expect(scanned.stdout.contains("Read \(Barcodes.milk) from the photo on standard input."), "\(scanned.stdout)")
            #expect(try items(try await pantry.run(["list", "--json"])).first?["barcode"] as? String == Barcodes.milk)
            let blank = scratch.url.appendingPathComponent("blank.jpg")
            let blankPGM = scratch.url.appendingPathComponent("blank.pgm")
            try EAN13Drawing.blank().write(to: blankPGM)
            try GreyImage(contentsOf: blankPGM).jpeg(quality: 85).write(to: blank)
            let nothing = try await pantry.run(["scan", "--image", blank.path, "--pick", "1"])
            #expect(nothing.status == 1)
            #expect(nothing.stderr.hasPrefix("pantry: No barcode found in \(blank.path):"), "\(nothing.stderr)")
            #expect(nothing.stderr.split(separator: "\n").count == 1)
            // A PGM is no photo a phone takes: refused as every app refuses it, before any lookup
            let refused = try await pantry.run(["scan", "--image", pgm.path, "--pick", "1"])
            #expect(refused.isOneLineError && refused.stderr == "pantry: \(pgm.path): it is not a JPEG, PNG or HEIC photo\n", "\(refused.stderr)")
        }
    }

    @Test func scanReadsTheBarcodeFromAPhonePhoto() async throws {
        try await withLiveServer { server, scratch in
            let pantry = try await signedIn(server, scratch)
            // Given a phone photo: a JPEG
            let pgm = scratch.url.appendingPathComponent("label.pgm")
            try EAN13Drawing.pgm(Barcodes.coffee).write(to: pgm)
            let photo = scratch.url.appendingPathComponent("IMG_0001.JPG")
            try GreyImage(contentsOf: pgm).jpeg(quality: 80).write(to: photo)
            // When it is scanned
            let scanned = try await pantry.run(["scan", "--image", photo.path, "--new", "--name", "Espresso"])
            // Then its barcode is read and the item is in the pantry
            #expect(scanned.status == 0, "\(scanned.stderr)")
            #expect(scanned.stdout.hasPrefix("Read \(Barcodes.coffee) from \(photo.path)."))
            #expect(try items(try await pantry.run(["list", "--json"])).first?["barcode"] as? String == Barcodes.coffee)
        }
    }

    @Test func errorsAreOneLineWithANonZeroStatus() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let pantry = CommandProcess.pantry(dataDirectory: scratch.folder("cli"), server: unreachableServer)
        let notSignedIn = try await pantry.run(["list"])
        #expect(notSignedIn.status == 1)
        #expect(notSignedIn.stderr == "pantry: Not signed in: run `pantry login --email EMAIL` first\n")
        let badSort = try await pantry.run(["list", "--sort", "colour"])
        #expect(badSort.status != 0 && badSort.status != 1)
        let noPassword = try await pantry.run(["login", "--email", "a@example.com"])
        #expect(noPassword.status == 1)
        #expect(noPassword.stderr.contains("--password-stdin"))
        let offlineLogin = try await pantry.run(["login", "--email", "a@example.com", "--password-stdin"], input: "whatever-pass\n")
        #expect(offlineLogin.status == 1)
        #expect(!offlineLogin.stderr.contains("Optional("))
        #expect(offlineLogin.stderr.split(separator: "\n").count == 1)
    }

    @Test func remindersAndWhoamiAndLogout() async throws {
        try await withLiveServer { server, scratch in
            let pantry = try await signedIn(server, scratch)
            _ = try await pantry.run(["add", "--name", "Old milk", "--expires", "2020-01-01"])
            _ = try await pantry.run(["add", "--name", "Bread", "--expires", "+1d"])
            let reminders = try await pantry.run(["reminders", "--json"])
            let shape = try #require(try JSONSerialization.jsonObject(with: Data(reminders.stdout.utf8)) as? [String: Any])
            #expect((shape["expired"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Old milk"])
            #expect((shape["expiringSoon"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Bread"])
            #expect(try await pantry.run(["reminders"]).stdout.contains("Expired"))
            #expect(try await pantry.run(["whoami"]).stdout.hasPrefix("cli_"))
            // Offline with changes waiting, sign-out is refused; online after a sync it goes through
            _ = try await pantry.run(["add", "--name", "Jam"], server: unreachableServer)
            let refused = try await pantry.run(["logout"], server: unreachableServer)
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("--force"))
            #expect(try await pantry.run(["sync"]).status == 0)
            let out = try await pantry.run(["logout"])
            #expect(out.status == 0)
            #expect(try await pantry.run(["whoami"]).status == 1)
        }
    }
}
