import BarcodeImages
import Foundation
import Testing
@testable import Pantry

/// A photo named on the command line is checked one way in every app (`CommandFile`): a pantry
/// item's photo, a SpendiQ receipt, a SustainU scan and the pantry's barcode photo say the same
/// words for the same file, name it once, read `-` from standard input, and keep nothing.
@Suite("One file check in the three apps", .timeLimit(.minutes(4)), .tags(.endToEnd))
struct FileCheckTests {
    @Test func theSameFileIsSaidTheSameWayByEveryCommandThatTakesAPhoto() async throws {
        try await withLiveServer { server, scratch in
            let (pantry, spendiq, sustainu, _, _) = try await JSONVocabularyTests.signedInToThreeApps(server, scratch)
            #expect(try await spendiq.run(["accounts", "add", "Cash", "--currency", "EUR"]).status == 0)
            let empty = scratch.url.appendingPathComponent("empty.jpg")
            try Data().write(to: empty)
            let pgm = scratch.url.appendingPathComponent("label.pgm")
            try EAN13Drawing.pgm(Barcodes.milk).write(to: pgm)
            let folder = scratch.folder("photos")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let missing = scratch.url.appendingPathComponent("nowhere.jpg").path
            let dangling = scratch.url.appendingPathComponent("gone.jpg").path
            try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: missing)
            let cases: [(path: String, input: String?, says: String)] = [
                (empty.path, nil, "\(empty.path): the file is empty"),
                (pgm.path, nil, "\(pgm.path): it is not a JPEG, PNG or HEIC photo"),
                (missing, nil, "\(missing): there is no such file, or it cannot be read"),
                (folder.path, nil, "\(folder.path): it is not a file (a folder, a pipe or a device)"),
                (dangling, nil, "\(dangling): it is a link to a file that is not there"),
                ("-", "not a photo\n", "the photo on standard input: it is not a JPEG, PNG or HEIC photo"),
            ]
            let commands: [(CommandProcess, (String) -> [String])] = [
                (pantry, { ["add", "--name", "Jam", "--photo", $0] }),
                (pantry, { ["scan", "--image", $0, "--pick", "1"] }),
                (spendiq, { ["add", "expense", "3", "--account", "Cash", "--receipt", $0] }),
                (sustainu, { ["scan", "--image", $0] }),
            ]
            for file in cases {
                for (app, arguments) in commands {
                    // When a command is given the file
                    let refused = try await app.run(arguments(file.path), input: file.input)
                    // Then it says the same line as every other, with the path once, and fails
                    #expect(refused.status == 1 && refused.stderr == "\(app.name): \(file.says)\n",
                            "\(app.name) \(arguments(file.path)): \(refused.status) \(refused.stderr)")
                }
            }
            // And an empty path is a usage mistake naming its option
            let blank = try await spendiq.run(["add", "expense", "3", "--account", "Cash", "--receipt", ""])
            #expect(blank.isOneLineError && blank.status == 64 && blank.stderr.contains("--receipt needs a photo's path"), "\(blank.stderr)")
            // And nothing was kept anywhere
            #expect(try #require(try await pantry.run(["list", "--json"]).json() as? [Any]).isEmpty)
            #expect(try #require(try await spendiq.run(["list", "--json"]).json() as? [Any]).isEmpty)
            #expect(try #require(try await sustainu.run(["scans", "--json"]).json() as? [Any]).isEmpty)
        }
    }
}
