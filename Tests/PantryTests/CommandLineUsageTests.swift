import Foundation
import Testing
@testable import Pantry

/// The `pantry` executable used as a stranger would: help, options in any order, absurd
/// numbers, control characters, a data directory that cannot be used.
@Suite("The pantry command, used as a stranger would", .timeLimit(.minutes(2)), .tags(.endToEnd))
struct CommandLineUsageTests {
    static let subcommands = ["register", "login", "logout", "whoami", "scan", "vote", "add", "list", "search", "show", "consume",
                              "remove", "edit", "reminders", "places", "status", "sync", "retry", "discard"]

    /// A device with nothing on it, and no server.
    func stranger(_ scratch: ScratchFolder) -> CommandProcess {
        CommandProcess.pantry(dataDirectory: scratch.folder("stranger"), server: unreachableServer)
    }

    @Test func helpOfASubcommandIsPrintedWithStatusZero() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let pantry = stranger(scratch)
        for arguments in [["help", "scan"], ["scan", "--help"], ["scan", "-h"]] {
            let help = try await pantry.run(arguments)
            #expect(help.status == 0, "\(arguments): \(help.stderr)")
            #expect(help.stdout.contains("USAGE: pantry scan"), "\(arguments)")
            #expect(help.stdout.contains("--image <image>"), "\(arguments)")
            #expect(help.stderr.isEmpty, "\(arguments)")
        }
    }

    @Test func everyOptionAndArgumentHasAHelpText() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let pantry = stranger(scratch)
        for subcommand in Self.subcommands {
            let help = try await pantry.run([subcommand, "--help"])
            #expect(help.status == 0, "\(subcommand)")
            let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            var inList = false
            for (index, line) in lines.enumerated() {
                if line == "OPTIONS:" || line == "ARGUMENTS:" { inList = true; continue }
                if line.isEmpty || !line.hasPrefix(" ") { inList = line.isEmpty ? inList : false; continue }
                // An entry starts two spaces in: its name, then its text on the same line or the next.
                guard inList, line.hasPrefix("  "), !line.hasPrefix("   ") else { continue }
                let entry = line.trimmingCharacters(in: .whitespaces)
                let hasText = entry.contains("  ") || (index + 1 < lines.count && lines[index + 1].hasPrefix("      "))
                #expect(hasText, "pantry \(subcommand): '\(entry)' has no help text")
            }
        }
    }

    @Test func globalOptionsWorkBeforeAndAfterTheSubcommand() async throws {
        try await withLiveServer { server, scratch in
            // Given the environment pointing at no server and another folder
            let pantry = CommandProcess.pantry(dataDirectory: scratch.folder("elsewhere"), server: unreachableServer)
            let folder = scratch.folder("device").path
            let suffix = UUID().uuidString.prefix(6).lowercased()
            // When the options come before the subcommand
            let registered = try await pantry.run(["--server", server.absoluteString, "register", "--username", "g_\(suffix)",
                                                   "--email", "g.\(suffix)@example.com", "--password-stdin"], input: "long-password\n")
            #expect(registered.status == 0, "\(registered.stderr)")
            let login = try await pantry.run(["--server", server.absoluteString, "--data-dir", folder, "login",
                                              "--email", "g.\(suffix)@example.com", "--password-stdin"], input: "long-password\n")
            // Then they are used: the sign-in went through the server, into that folder
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout == "Signed in as g_\(suffix).\n")
            // And after the subcommand, or one before and one after, they work too
            #expect(try await pantry.run(["whoami", "--data-dir", folder]).stdout.hasPrefix("g_\(suffix) "))
            #expect(try await pantry.run(["--data-dir", folder, "whoami"]).stdout.hasPrefix("g_\(suffix) "))
            let added = try await pantry.run(["--data-dir", folder, "add", "--name", "Tea", "--server", server.absoluteString])
            #expect(added.status == 0, "\(added.stderr)")
            let synced = try await pantry.run(["sync", "--server", server.absoluteString, "--data-dir", folder])
            #expect(synced.stdout.hasPrefix("Synced:"), "\(synced.stderr)")
            // And the environment's folder was never signed in
            #expect(try await pantry.run(["whoami"]).status == 1)
        }
    }

    @Test func absurdNumbersAreRefusedInOneLine() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let pantry = stranger(scratch)
        let cases: [(arguments: [String], says: String)] = [
            (["add", "--name", "Rice", "--quantity", "1e308"], "not a quantity"),
            (["add", "--name", "Rice", "--quantity", "nan"], "not a quantity"),
            (["add", "--name", "Rice", "--quantity", "-1"], "not a quantity"),
            (["add", "--name", "Rice", "--quantity", "0"], "not a quantity"),
            (["add", "--quantity", "inf", "--name", "Rice"], "not a quantity"),
            (["edit", "abc", "--quantity", "1000001"], "not a quantity"),
            (["consume", "abc", "--quantity", "-1"], "not a quantity"),
            (["consume", "abc", "--quantity", "1e308"], "not a quantity"),
            (["scan", "4006381333931", "--quantity", "nan", "--pick", "1"], "not a quantity"),
            (["reminders", "--days", "99999999999"], "--days"),
            (["reminders", "--days", "-1"], "--days"),
            (["scan", "4006381333931", "--pick", "0"], "--pick"),
            (["scan", "4006381333931", "--pick", "-9223372036854775808"], "--pick"),
            (["add", "--name", "Rice", "--at", "91,0"], "not a position"),
            (["add", "--name", "Rice", "--at", "nan,nan"], "not a position"),
            (["add", "--name", "Rice", "--at", "1e400,11"], "not a position"),
            (["add", "--name", "Rice", "--expires", "+99999999d"], "not an expiry"),
            (["list", "--expiring", "99999999999d"], "not a number of days"),
            (["vote", "4006381333931", "--rating", "6"], "not a rating"),
            (["vote", "4006381333931", "--rating", "-6"], "not a rating"),
            (["--server", "http://127.0.0.1:99999", "status"], "not a server URL"),
            (["status", "--server", "http://127.0.0.1:0"], "not a server URL"),
        ]
        for (arguments, says) in cases {
            let outcome = try await pantry.run(arguments)
            #expect(outcome.isOneLineError, "\(arguments): \(outcome.status) \(outcome.stderr)")
            #expect(outcome.stderr.contains(says), "\(arguments): \(outcome.stderr)")
        }
    }

    @Test func controlCharactersInTextAreRefused() async throws {
        try await withLiveServer { server, scratch in
            let (pantry, email) = try await signedInProcess(server, scratch)
            // Each is named as a person would name it
            for (arguments, named) in [(["add", "--name", "Tea\u{1}"], "the control character U+0001"),
                                       (["add", "--name", "Tea", "--category", "\u{1B}[31mred"], "an escape character"),
                                       (["add", "--name", "Tea\nTime"], "a line break"), (["add", "--name", "Tea\tTime"], "a tab"),
                                       (["list", "--where", "Coop\u{7}"], "the control character U+0007"),
                                       (["search", "tea\u{1B}"], "an escape character"),
                                       (["register", "--username", "bob\u{1}", "--email", "bob@example.com", "--password-stdin"],
                                        "the control character U+0001")] {
                let outcome = try await pantry.run(arguments, input: "long-password\n")
                #expect(outcome.isOneLineError, "\(arguments): \(outcome.stderr)")
                #expect(outcome.stderr.contains("contains \(named): type it without one"), "\(arguments): \(outcome.stderr)")
            }
            // A NUL byte cannot be in an argument, but it can come through standard input
            let nul = try await pantry.run(["login", "--email", email, "--password-stdin"], input: "long-\u{0}password\n")
            #expect(nul.isOneLineError, "\(nul.stderr)")
            #expect(nul.stderr.contains("contains a NUL byte"), "\(nul.stderr)")
            // And a description may have several lines
            #expect(try await pantry.run(["add", "--name", "Tea", "--description", "Green\nfrom Japan"]).status == 0)
            #expect(try jsonItems(try await pantry.run(["list", "--json"])).count == 1)
        }
    }

    @Test func unusableDataDirectoryIsSaidAsSuch() async throws {
        try await withLiveServer { server, scratch in
            let file = scratch.url.appendingPathComponent("not-a-folder")
            try Data("x".utf8).write(to: file)
            for folder in [file, file.appendingPathComponent("inside")] {
                let pantry = CommandProcess.pantry(dataDirectory: folder, server: server)
                let login = try await pantry.run(["login", "--email", "a@example.com", "--password-stdin"], input: "long-password\n")
                #expect(login.isOneLineError, "\(login.stderr)")
                #expect(login.stderr.contains("data directory \(folder.path)"), "\(login.stderr)")
                #expect(!login.stderr.contains("No connection"))
            }
        }
    }

    @Test(.enabled(if: getuid() != 0, "root writes anywhere"))
    func unwritableDataDirectoryIsSaidAsSuch() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let folder = scratch.folder("locked")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: folder.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder.path) }
        let outcome = try await CommandProcess.pantry(dataDirectory: folder, server: unreachableServer).run(["whoami"])
        #expect(outcome.isOneLineError)
        #expect(outcome.stderr.contains("not writable"))
    }

    @Test func fileErrorsNameThePathInOneLine() async throws {
        try await withLiveServer { server, scratch in
            let (pantry, _) = try await signedInProcess(server, scratch)
            _ = try await pantry.run(["add", "--name", "Tea", "--where", "Coop", "--at", "44.49,11.34"])
            let missing = scratch.url.appendingPathComponent("no-such-folder/places.json").path
            let geojson = try await pantry.run(["places", "--geojson", missing])
            #expect(geojson.isOneLineError, "\(geojson.stderr)")
            #expect(geojson.stderr.contains(missing), "\(geojson.stderr)")
            let image = try await pantry.run(["scan", "--image", missing, "--pick", "1"])
            #expect(image.isOneLineError, "\(image.stderr)")
            #expect(image.stderr.contains(missing), "\(image.stderr)")
        }
    }
}
