import Foundation
import Testing

/// What every app's command takes and says the same way (CommandLineSupport), met as a stranger
/// meets it: an option the subcommand does not take, help at 80 columns, a subcommand that does
/// not exist, settings that cannot be used. Each test runs the three built commands.
@Suite("Every command's shared options and help, as a stranger meets them", .tags(.endToEnd), .timeLimit(.minutes(2)))
struct SharedOptionsTests {
    static let commands = ["pantry", "sustainu", "spendiq"]

    /// A device with nothing on it, and no server.
    private func stranger(_ command: String, _ scratch: ScratchFolder) -> CommandProcess {
        CommandProcess(command, dataDirectory: scratch.folder("stranger"), server: unreachableServer)
    }

    @Test(arguments: commands) func anOptionTheSubcommandDoesNotTakeIsRefusedBeforeOrAfterItsName(_ command: String) async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        for arguments in [["--json", "logout"], ["logout", "--json"], ["--bogus", "whoami"], ["--json", "help", "whoami"]] {
            let refused = try await stranger(command, scratch).run(arguments)
            #expect(refused.status == 64 && refused.isOneLineError, "\(command) \(arguments): \(refused.status) \(refused.stderr)")
            #expect(refused.stderr.contains("Unknown option"), "\(command) \(arguments): \(refused.stderr)")
        }
    }

    @Test(arguments: commands) func helpFitsEightyColumnsUsageLineIncluded(_ command: String) async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        for arguments in [["--help"], ["status", "--help"], ["help", "whoami"]] {
            let help = try await stranger(command, scratch).run(arguments, environment: ["COLUMNS": "80"])
            #expect(help.status == 0 && help.stderr.isEmpty, "\(command) \(arguments): \(help.stderr)")
            let wide = help.stdout.split(separator: "\n").filter { $0.count > 80 }
            #expect(wide.isEmpty, "\(command) \(arguments): \(wide)")
            #expect(help.stdout.contains("USAGE: \(command)"), "\(command) \(arguments)")
        }
    }

    @Test(arguments: commands) func aSubcommandThatDoesNotExistIsAUsageMistake(_ command: String) async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        for arguments in [["bogus"], ["bogus", "--help"], ["help", "bogus"]] {
            let refused = try await stranger(command, scratch).run(arguments)
            #expect(refused.status == 64 && refused.isOneLineError, "\(command) \(arguments): \(refused.status) \(refused.stdout)\(refused.stderr)")
            #expect(refused.stderr == "\(command): No command 'bogus': \(command) --help lists them\n", "\(command) \(arguments)")
        }
        #expect(try await stranger(command, scratch).run(["help", "help"]).status == 0)
    }

    @Test(arguments: commands) func settingsThatCannotBeUsedAreUsageMistakes(_ command: String) async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let variable = command.uppercased() + "_ANSWER_TIMEOUT"
        for (arguments, environment, says) in [
            (["--data-dir", "", "whoami"], [:], "--data-dir needs a folder's path"),
            (["whoami", "--server", "http://127.0.0.1:99999"], [:], "ot a server URL"),
            (["whoami"], [variable: "0"], "\(variable) must be a number of seconds from 1 to 300"),
            (["whoami"], ["TZ": "Nowhere/Bogus"], "is not a time zone"),
        ] as [([String], [String: String], String)] {
            let refused = try await stranger(command, scratch).run(arguments, environment: environment)
            #expect(refused.status == 64 && refused.isOneLineError && refused.stderr.contains(says), "\(command) \(arguments): \(refused.stderr)")
        }
        // An empty variable is no setting
        let prefix = command.uppercased()
        for empty in [variable, "\(prefix)_SERVER", "\(prefix)_NO_ANALYTICS", "TZ"] {
            let unset = try await stranger(command, scratch).run(["whoami"], answerTimeout: nil, environment: [empty: ""])
            #expect(unset.stderr == "\(command): Not signed in: run `\(command) login --email EMAIL` first\n", "\(empty): \(unset.stderr)")
        }
    }
    @Test(arguments: commands) func withoutADataFolderSettingTheDataLivesUnderHome(_ command: String) async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        // NB: Foundation's home on Linux comes from the password database; a HOME set for a
        // container, a test or `sudo -E` must win, as it does for every Unix tool.
        let home = scratch.folder("home")
        let prefix = command.uppercased()
        let login = try await stranger(command, scratch).run(["login", "--email", "a@example.com", "--password-stdin"],
                                                             input: "long-password\n",
                                                             environment: ["\(prefix)_DATA_DIR": "", "XDG_DATA_HOME": "", "HOME": home.path])
        #expect(login.status == 1 && login.isOneLineError, "\(login.stderr)")
        let folder = home.appendingPathComponent(".local/share/\(command)")
        #expect(FileManager.default.fileExists(atPath: folder.path), "\(command) kept its data elsewhere")
    }
}
