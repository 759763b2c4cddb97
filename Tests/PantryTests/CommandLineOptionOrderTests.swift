import Foundation
import Testing

/// Every option of `pantry` before or after its subcommand's name, as a person types them.
@Suite("The pantry command takes options before or after the subcommand", .timeLimit(.minutes(3)))
struct CommandLineOptionOrderTests {
    @Test func jsonAndTheSubcommandsOwnOptionsWorkBeforeItsName() async throws {
        try await withLiveServer { server, scratch in
            // Given a signed-in device with two items
            let (pantry, _) = try await signedInProcess(server, scratch)
            #expect(try await pantry.run(["add", "--name", "Tea", "--category", "drinks"]).status == 0)
            #expect(try await pantry.run(["add", "--name", "Rice", "--category", "grains"]).status == 0)
            // When --json (and --category with its value) come before, after or around `list`
            for arguments in [["list", "--json", "--category", "drinks"], ["--json", "list", "--category", "drinks"],
                              ["--json", "--category", "drinks", "list"], ["--category=drinks", "list", "--json"]] {
                let listed = try await pantry.run(arguments)
                // Then each is the same listing, in JSON
                #expect(listed.status == 0, "\(arguments): \(listed.stderr)")
                #expect(try jsonItems(listed).compactMap { $0["name"] as? String } == ["Tea"], "\(arguments)")
            }
            // And a shared option before, the subcommand's after, is as good
            let whoami = try await pantry.run(["--json", "--data-dir", pantry.dataDirectory.path, "whoami"])
            #expect(whoami.status == 0, "\(whoami.stderr)")
            #expect(try jsonObject(whoami)["username"] != nil, "\(whoami.stdout)")
        }
    }

    @Test func anOptionTheSubcommandDoesNotTakeIsRefusedBeforeOrAfterItsName() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let pantry = CommandProcess.pantry(dataDirectory: scratch.folder("stranger"), server: unreachableServer)
        for arguments in [["--json", "add", "--name", "Tea"], ["add", "--name", "Tea", "--json"], ["--bogus", "list"]] {
            let refused = try await pantry.run(arguments)
            #expect(refused.status == 64 && refused.isOneLineError, "\(arguments): \(refused.status) \(refused.stderr)")
            #expect(refused.stderr.contains("Unknown option"), "\(arguments): \(refused.stderr)")
        }
    }
}

/// What a stranger types besides the subcommands: help at 80 columns, a subcommand that does not
/// exist, settings that cannot be used.
@Suite("The pantry command's help and settings, as a stranger meets them", .timeLimit(.minutes(2)))
struct CommandLineSettingsTests {
    @Test func helpFitsEightyColumnsUsageLineIncluded() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let pantry = CommandProcess.pantry(dataDirectory: scratch.folder("stranger"), server: unreachableServer)
        for arguments in [["--help"], ["list", "--help"], ["scan", "--help"], ["help", "add"]] {
            let help = try await pantry.run(arguments, environment: ["COLUMNS": "80"])
            #expect(help.status == 0 && help.stderr.isEmpty, "\(arguments): \(help.stderr)")
            let wide = help.stdout.split(separator: "\n").filter { $0.count > 80 }
            #expect(wide.isEmpty, "\(arguments): \(wide)")
            #expect(help.stdout.contains("USAGE: pantry"), "\(arguments)")
        }
    }

    @Test func aSubcommandThatDoesNotExistIsAUsageMistake() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let pantry = CommandProcess.pantry(dataDirectory: scratch.folder("stranger"), server: unreachableServer)
        for arguments in [["bogus"], ["bogus", "--help"], ["help", "bogus"]] {
            let refused = try await pantry.run(arguments)
            #expect(refused.status == 64 && refused.isOneLineError, "\(arguments): \(refused.status) \(refused.stdout)\(refused.stderr)")
            #expect(refused.stderr == "pantry: No command 'bogus': pantry --help lists them\n", "\(arguments)")
        }
        #expect(try await pantry.run(["help", "help"]).status == 0)
    }

    @Test func settingsThatCannotBeUsedAreUsageMistakes() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let pantry = CommandProcess.pantry(dataDirectory: scratch.folder("stranger"), server: unreachableServer)
        for (arguments, environment, says) in [
            (["--data-dir", "", "list"], [:], "--data-dir needs a folder's path"),
            (["list"], ["PANTRY_ANSWER_TIMEOUT": "0"], "PANTRY_ANSWER_TIMEOUT must be a number of seconds from 1 to 300"),
            (["list"], ["TZ": "Nowhere/Bogus"], "is not a time zone"),
        ] as [([String], [String: String], String)] {
            let refused = try await pantry.run(arguments, environment: environment)
            #expect(refused.status == 64 && refused.isOneLineError && refused.stderr.contains(says), "\(arguments): \(refused.stderr)")
        }
        // An empty variable is no setting
        let unset = try await pantry.run(["list"], answerTimeout: nil, environment: ["PANTRY_ANSWER_TIMEOUT": ""])
        #expect(unset.stderr == "pantry: Not signed in: run `pantry login --email EMAIL` first\n", "\(unset.stderr)")
    }
}
