import Foundation
import Testing

/// Every option of `sustainu` before or after its subcommand's name, as a person types them.
@Suite("The sustainu command takes options before or after the subcommand", .timeLimit(.minutes(3)))
struct CommandLineOptionOrderTests {
    @Test func jsonAndTheSubcommandsOwnOptionsWorkBeforeItsName() async throws {
        try await withLiveServer { server, scratch in
            // Given a signed-in phone
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            let (_, username) = try await phone.signUp()
            // When --json comes before or after the subcommand's name
            for arguments in [["whoami", "--json"], ["--json", "whoami"]] {
                let run = try await phone.offline(arguments)
                // Then the answer is JSON either way
                #expect(run.status == 0, "\(arguments): \(run.stderr)")
                #expect((try json(run) as? [String: Any])?["username"] as? String == username, "\(arguments): \(run.stdout)")
            }
            for arguments in [["scans", "--json"], ["--json", "scans"]] {
                let run = try await phone.offline(arguments)
                let scans = try json(run) as? [Any]
                #expect(run.status == 0 && scans != nil, "\(arguments): \(run.stdout)\(run.stderr)")
            }
            // And an option of the subcommand's own, with its value, before its name
            let limited = try await phone.offline(["--limit", "0", "leaderboard"])
            #expect(limited.status == 64 && limited.stderr.contains("1 to 100 people"), "\(limited.stderr)")
        }
    }

    @Test func anOptionTheSubcommandDoesNotTakeIsRefusedBeforeOrAfterItsName() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let phone = Phone(dataDirectory: scratch.folder("stranger"), server: unreachableServer)
        for arguments in [["--json", "logout"], ["logout", "--json"], ["--bogus", "scans"]] {
            let refused = try await phone.offline(arguments)
            #expect(refused.status == 64 && refused.isOneLineError, "\(arguments): \(refused.status) \(refused.stderr)")
            #expect(refused.stderr.contains("Unknown option"), "\(arguments): \(refused.stderr)")
        }
    }
}

/// What a stranger types besides the subcommands: help at 80 columns, a subcommand that does not
/// exist, settings that cannot be used.
@Suite("The sustainu command's help and settings, as a stranger meets them", .timeLimit(.minutes(2)))
struct CommandLineSettingsTests {
    @Test func helpFitsEightyColumnsUsageLineIncluded() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let sustainu = CommandProcess("sustainu", dataDirectory: scratch.folder("stranger"), server: unreachableServer)
        for arguments in [["--help"], ["scans", "--help"], ["help", "scans"]] {
            let help = try await sustainu.run(arguments, environment: ["COLUMNS": "80"])
            #expect(help.status == 0 && help.stderr.isEmpty, "\(arguments): \(help.stderr)")
            let wide = help.stdout.split(separator: "\n").filter { $0.count > 80 }
            #expect(wide.isEmpty, "\(arguments): \(wide)")
            #expect(help.stdout.contains("USAGE: sustainu"), "\(arguments)")
        }
    }

    @Test func aSubcommandThatDoesNotExistIsAUsageMistake() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let sustainu = CommandProcess("sustainu", dataDirectory: scratch.folder("stranger"), server: unreachableServer)
        for arguments in [["bogus"], ["bogus", "--help"], ["help", "bogus"]] {
            let refused = try await sustainu.run(arguments)
            #expect(refused.status == 64 && refused.isOneLineError, "\(arguments): \(refused.status) \(refused.stdout)\(refused.stderr)")
            #expect(refused.stderr == "sustainu: No command 'bogus': sustainu --help lists them\n", "\(arguments)")
        }
        #expect(try await sustainu.run(["help", "help"]).status == 0)
    }

    @Test func settingsThatCannotBeUsedAreUsageMistakes() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let sustainu = CommandProcess("sustainu", dataDirectory: scratch.folder("stranger"), server: unreachableServer)
        for (arguments, environment, says) in [
            (["--data-dir", "", "scans"], [:], "--data-dir needs a folder's path"),
            (["scans"], ["SUSTAINU_ANSWER_TIMEOUT": "0"], "SUSTAINU_ANSWER_TIMEOUT must be a number of seconds from 1 to 300"),
            (["scans"], ["TZ": "Nowhere/Bogus"], "is not a time zone"),
        ] as [([String], [String: String], String)] {
            let refused = try await sustainu.run(arguments, environment: environment)
            #expect(refused.status == 64 && refused.isOneLineError && refused.stderr.contains(says), "\(arguments): \(refused.stderr)")
        }
        // An empty variable is no setting
        let unset = try await sustainu.run(["scans"], answerTimeout: nil, environment: ["SUSTAINU_ANSWER_TIMEOUT": ""])
        #expect(unset.stderr == "sustainu: Not signed in: run `sustainu login --email EMAIL` first\n", "\(unset.stderr)")
    }
}
