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
