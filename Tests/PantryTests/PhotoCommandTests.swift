import Foundation
import Testing

@Suite("Item photos through the pantry command: attached offline, uploaded once, read in a household", .timeLimit(.minutes(5)),
       .tags(.endToEnd))
struct PhotoCommandTests {
    @Test(arguments: Backend.available)
    func aPhotoAddedOfflineReachesTheHouseholdAndIsSavedByAnotherMember(_ backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            // Given Ann and Bob in one household, and a PNG of a jar of jam
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            let bob = try await PantryPerson.signUp("bob", server: server, scratch: scratch)
            try await household(ann: ann, bob: bob)
            var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            png.append(Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }))
            let file = scratch.url.appendingPathComponent("jam.png")
            try png.write(to: file)

            // When Ann adds the jam with its photo in the basement
            let added = try await ann.run(["add", "--name", "Jam", "--household", "Home", "--photo", file.path], server: unreachableServer)
            #expect(added.stdout.contains("with its photo (49 KiB)"), "\(added.stdout)")
            let id = String(try await ann.itemID("Jam").suffix(8))
            #expect(try await ann.run(["status"], server: unreachableServer).stdout.contains("1 attachment (49 KiB) to upload"))
            #expect(try await ann.run(["photo", id], server: unreachableServer).stdout
                .contains("Photo of Jam: PNG, 49 KiB, on this device, waiting to be uploaded"))

            // And syncs once back online; Bob syncs
            try await ann.run(["sync"])
            try await bob.run(["sync"])

            // Then Bob's device has the item, not the photo, and saves the same bytes from the household
            #expect(try await bob.run(["photo", id]).stdout.contains("not on this device"))
            let saved = scratch.url.appendingPathComponent("bob-jam.png")
            let save = try await bob.run(["photo", id, "--save", saved.path])
            #expect(save.stdout.contains("Saved 49 KiB to \(saved.path)."), "\(save.stdout)")
            #expect(try Data(contentsOf: saved) == png)
            #expect(try await bob.run(["photo", id]).stdout.contains("Photo of Jam: PNG, 49 KiB, on this device."))
            // And an item without a photo says so, in one line with status 1
            try await ann.run(["add", "--name", "Salt"])
            let salt = String(try await ann.itemID("Salt").suffix(8))
            let none = try await ann.pantry.run(["photo", salt])
            #expect(none.status == 1 && none.stderr.contains("Salt has no photo"), "\(none.stderr)")
            // And `edit --photo` gives it one, uploaded to her own space (at once online, else with a sync)
            let edited = try await ann.run(["edit", salt, "--photo", file.path])
            #expect(edited.stdout.contains("Updated Salt with its new photo (49 KiB)."), "\(edited.stdout)")
            try await ann.run(["sync"])
            #expect(!(try await ann.run(["status"]).stdout.contains("to upload")))
            #expect(try await ann.run(["photo", salt]).stdout.contains("Photo of Salt: PNG, 49 KiB, on this device."))
        }
    }
}

extension PhotoCommandTests {
    /// What a stranger's week found: a part of an id too short to be safe, `--save` onto an existing
    /// file and to a full standard output, empty names, a link to a photo.
    @Test func aShortIdAFullDiskAndOddNamesGetClearAnswersAndNothingIsLost() async throws {
        try await withLiveServer { server, scratch in
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            png.append(Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 5) }))
            let file = scratch.url.appendingPathComponent("jam.png")
            try png.write(to: file)
            // A link to a photo is the photo
            let link = scratch.url.appendingPathComponent("link to jam.png")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
            try await ann.run(["add", "--name", "Jam", "--photo", link.path])
            let id = try await ann.itemID("Jam")
            // One character never picks an item, however few there are
            for command in [["remove", String(id.suffix(1))], ["photo", String(id.suffix(3))]] {
                let short = try await ann.pantry.run(command)
                #expect(short.status == 64 && short.stderr.contains("too short to pick an item safely"), "\(command): \(short.stderr)")
            }
            #expect(try await ann.items().count == 1)
            // --save onto a file that is there is refused; standard output on a full disk is one line
            let there = try await ann.pantry.run(["photo", String(id.suffix(8)), "--save", file.path])
            #expect(there.status == 1 && there.stderr.contains("exists already"), "\(there.stderr)")
            // (a folder is called one, not a file that exists)
            let folder = scratch.folder("a dir")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let into = try await ann.pantry.run(["photo", String(id.suffix(8)), "--save", folder.path])
            #expect(into.status == 1 && into.isOneLineError && into.stderr.contains("\(folder.path) is a folder: give a file name"), "\(into.stderr)")
            // An empty file name is a usage mistake (it exited 1 before), like a missing one
            let empty = try await ann.pantry.run(["photo", String(id.suffix(8)), "--save", ""])
            #expect(empty.status == 64 && empty.stderr.contains("--save needs a file name"), "\(empty.stderr)")
            let full = try await ann.pantry.run(["photo", String(id.suffix(8)), "--save", "-"], stdoutTo: "/dev/full")
            #expect(full.status == 1 && full.stderr.contains("Cannot write to standard output"), "\(full.stderr)")
            #expect(!full.stderr.contains("Fatal error"))
            // Standard output holds the bytes alone
            let out = try await ann.pantry.run(["photo", String(id.suffix(8)), "--save", "-"])
            #expect(out.status == 0 && Data(out.stdout.utf8).count > 0 && out.stderr.isEmpty, "\(out.stderr)")
            // Empty names are said as such
            let emptySave = try await ann.pantry.run(["photo", String(id.suffix(8)), "--save", ""])
            #expect(emptySave.status != 0 && emptySave.stderr.contains("not an empty one"), "\(emptySave.stderr)")
            let emptyPhoto = try await ann.pantry.run(["add", "--name", "Salt", "--photo", ""])
            #expect(emptyPhoto.status != 0 && emptyPhoto.stderr.contains("not an empty one"), "\(emptyPhoto.stderr)")
        }
    }
}

extension PhotoCommandTests {
    /// A photo the server refuses (past the person's quota): `failures` lists it with how to settle
    /// it, `sync` never says "Synced" while it waits, however many syncs later, and lists, `show`
    /// and `--json` say which items have a photo.
    @Test func aRefusedPhotoIsListedByFailuresAndNoSyncSaysSyncedWhileItWaits() async throws {
        try await withLiveServer(configure: { $0.quotas.bytesPerUser = 30_000 }) { server, scratch in
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            png.append(Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 11) }))
            let file = scratch.url.appendingPathComponent("jam.png")
            try png.write(to: file)
            // Given a photo larger than what the server leaves Ann
            try await ann.run(["add", "--name", "Jam", "--photo", file.path], server: unreachableServer)
            try await ann.run(["add", "--name", "Salt"], server: unreachableServer)
            // When she syncs: the items go, the photo is refused
            let first = try await ann.pantry.run(["sync"])
            #expect(first.status != 0 && first.stderr.contains("Sync incomplete") && first.stderr.contains("refused 1"), "\(first.stderr)")
            // Then the next sync, which refuses nothing new, still does not say "Synced"
            let again = try await ann.pantry.run(["sync"])
            #expect(again.status != 0, "\(again.stdout)")
            #expect(!again.stdout.contains("Synced") && again.stderr.contains("1 change(s) refused earlier still wait"), "\(again.stdout)\(again.stderr)")
            #expect(again.stderr.contains("pantry retry ID"), "\(again.stderr)")
            // And `failures` lists the upload, with how to settle it, in words and in JSON
            let failures = try await ann.run(["failures"])
            #expect(failures.stdout.contains("photo of item Jam, 49 KiB") && failures.stdout.contains("pantry retry ID"), "\(failures.stdout)")
            let listed = try #require(try await ann.run(["failures", "--json"]).json() as? [[String: Any]])
            let refused = try #require(listed.first { $0["kind"] as? String == "call" }, "\(listed)")
            let jamID = try await ann.itemID("Jam")
            #expect((refused["reason"] as? String)?.isEmpty == false && refused["recordId"] as? String == jamID, "\(refused)")
            // And the items say which has a photo
            let list = try await ann.run(["list"])
            #expect(list.stdout.contains("Jam [photo]") && !list.stdout.contains("Salt [photo]"), "\(list.stdout)")
            let items = try await ann.items()
            #expect((items.first { $0["name"] as? String == "Jam" }?["photo"] as? String)?.hasPrefix("sha256:") == true)
            #expect(items.first { $0["name"] as? String == "Salt" }?["photo"] is NSNull)
            let jam = String(try await ann.itemID("Jam").suffix(8))
            #expect(try await ann.run(["show", jam]).stdout.contains("pantry photo \(jam) --save FILE"))
            // When she drops the upload, the jam loses its photo, and the next sync says "Synced" again
            let shortID = try #require(refused["shortId"] as? String)
            try await ann.run(["discard", shortID])
            #expect(try await ann.items().first { $0["name"] as? String == "Jam" }?["photo"] is NSNull)
            #expect(try await ann.run(["sync"]).stdout.contains("Synced"))
            #expect(try await ann.run(["failures"]).stdout == "Nothing was refused.\n")
        }
    }
}

extension PhotoCommandTests {
    /// A photo the server refuses marks its item (`!`), `failures` names the item, and discarding
    /// the upload clears the item's photo on every device, so that none says "not uploaded yet" for ever.
    @Test(arguments: Backend.available)
    func aRefusedPhotoMarksItsItemAndDiscardingItClearsThePhotoOnEveryDevice(_ backend: Backend) async throws {
        try await withLiveServer(on: backend, configure: { $0.quotas.bytesPerUser = 30_000 }) { server, scratch in
            // Given Ann and Bob in one household, and Ann's jam with a photo larger than what the server leaves her
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            let bob = try await PantryPerson.signUp("bob", server: server, scratch: scratch)
            try await household(ann: ann, bob: bob)
            var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            png.append(Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }))
            let file = scratch.url.appendingPathComponent("jam.png")
            try png.write(to: file)
            try await ann.run(["add", "--name", "Jam", "--household", "Home", "--photo", file.path], server: unreachableServer)
            try await ann.run(["add", "--name", "Salt", "--household", "Home"], server: unreachableServer)

            // When she syncs: the items go, the photo is refused; Bob syncs
            #expect(try await ann.pantry.run(["sync"]).status != 0)
            try await bob.run(["sync"])
            let jamID = try await ann.itemID("Jam"), id = String(jamID.suffix(8))
            // NB: what the finding saw: Bob is told the photo comes, and it never does
            #expect(try await bob.run(["list"]).stdout.contains("Jam [photo]"))

            // Then her list marks the jam as refused, with why, and not the salt
            let list = try await ann.run(["list"])
            let jamLine = try #require(list.stdout.split(separator: "\n").first { $0.contains("Jam") }, "\(list.stdout)")
            let saltLine = try #require(list.stdout.split(separator: "\n").first { $0.contains("Salt") }, "\(list.stdout)")
            #expect(jamLine.contains("!") && !saltLine.contains("!"), "\(list.stdout)")
            #expect(list.stdout.contains("refused by the server: pantry failures"), "\(list.stdout)")
            let jam = try #require(try await ann.items().first { $0["name"] as? String == "Jam" })
            let state = try #require(jam["syncState"] as? [String: Any], "\(jam)")
            #expect(state["state"] as? String == "failed"
                    && (state["reason"] as? String)?.hasPrefix("the upload of its photo was refused: ") == true, "\(state)")
            // And `failures` names the item the photo belongs to, in words and in JSON
            let failures = try await ann.run(["failures"])
            #expect(failures.stdout.contains("photo of item Jam, 49 KiB"), "\(failures.stdout)")
            let listed = try #require(try await ann.run(["failures", "--json"]).json() as? [[String: Any]])
            let refused = try #require(listed.first { $0["kind"] as? String == "call" }, "\(listed)")
            #expect(refused["recordId"] as? String == jamID && refused["what"] as? String == "photo of item Jam, 49 KiB", "\(refused)")

            // When she discards the refused upload, the message says the jam loses its photo
            let discard = try await ann.run(["discard", try #require(refused["shortId"] as? String)])
            #expect(discard.stdout.replacingOccurrences(of: "\n", with: " ").contains("item Jam no longer has a photo"), "\(discard.stdout)")
            // And once both sync, no device says a photo comes: the jam has none, and nothing is marked
            #expect(try await ann.run(["sync"]).stdout.contains("Synced"))
            try await bob.run(["sync"])
            for person in [ann, bob] {
                let items = try await person.run(["list"]).stdout
                #expect(items.contains("Jam") && !items.contains("[photo]") && !items.contains("!"), "\(items)")
                let photo = try await person.pantry.run(["photo", id])
                #expect(photo.status == 1 && photo.stderr.contains("Jam has no photo"), "\(photo.stderr)")
            }
            #expect(try await ann.run(["failures"]).stdout == "Nothing was refused.\n")
        }
    }
}
