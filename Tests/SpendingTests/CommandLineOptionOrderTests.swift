import Foundation
import Testing

/// Every option of `spendiq` before or after its subcommand's name, at every level, as a person
/// types them (`spendiq --json list` was refused).
@Suite("The spendiq command takes options before or after the subcommand", .timeLimit(.minutes(3)))
struct CommandLineOptionOrderTests {
    @Test func jsonAndTheSubcommandsOwnOptionsWorkBeforeItsName() async throws {
        try await withLiveServer { server, scratch in
            // Given a signed-in device with an account and two expenses
            let device = try await CommandLineTests.signedIn(server, scratch)
            #expect(try await device.run(["accounts", "add", "Wallet", "--currency", "EUR"]).status == 0)
            #expect(try await device.run(["add", "expense", "3", "--account", "Wallet", "--category", "food"]).status == 0)
            #expect(try await device.run(["add", "expense", "4", "--account", "Wallet", "--category", "fun"]).status == 0)
            // When --json and --category come before, after or around `list`
            for arguments in [["list", "--json", "--category", "food"], ["--json", "list", "--category", "food"],
                              ["--json", "--category", "food", "list"], ["--category=food", "--json", "list"]] {
                let listed = try await device.run(arguments)
                // Then each is the same listing, in JSON
                #expect(listed.status == 0, "\(arguments): \(listed.stderr)")
                let rows = try #require(try listed.json() as? [[String: Any]], "\(arguments): \(listed.stdout)")
                #expect(rows.compactMap { $0["category"] as? String } == ["food"], "\(arguments)")
            }
            // And at the second level too: before `accounts`, between it and `list`, after `list`
            for arguments in [["--json", "accounts", "list"], ["accounts", "--json", "list"], ["accounts", "list", "--json"]] {
                let accounts = try await device.run(arguments)
                #expect(accounts.status == 0, "\(arguments): \(accounts.stderr)")
                #expect((try accounts.json() as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Wallet"], "\(arguments)")
            }
        }
    }

    @Test func anOptionTheSubcommandDoesNotTakeIsRefusedBeforeOrAfterItsName() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let device = CommandProcess.spendiq(dataDirectory: scratch.folder("stranger"), server: unreachableServer)
        for arguments in [["--json", "logout"], ["logout", "--json"], ["--bogus", "list"]] {
            let refused = try await device.run(arguments)
            #expect(refused.status == 64 && refused.isOneLineError, "\(arguments): \(refused.status) \(refused.stderr)")
            #expect(refused.stderr.contains("Unknown option"), "\(arguments): \(refused.stderr)")
        }
    }
}

/// What a stranger types besides the subcommands: help at 80 columns, a subcommand that does not
/// exist, settings that cannot be used.
@Suite("The spendiq command's help and settings, as a stranger meets them", .timeLimit(.minutes(2)))
struct CommandLineSettingsTests {
    @Test func helpFitsEightyColumnsUsageLineIncluded() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let spendiq = CommandProcess.spendiq(dataDirectory: scratch.folder("stranger"), server: unreachableServer)
        for arguments in [["--help"], ["list", "--help"], ["help", "list"]] {
            let help = try await spendiq.run(arguments, environment: ["COLUMNS": "80"])
            #expect(help.status == 0 && help.stderr.isEmpty, "\(arguments): \(help.stderr)")
            let wide = help.stdout.split(separator: "\n").filter { $0.count > 80 }
            #expect(wide.isEmpty, "\(arguments): \(wide)")
            #expect(help.stdout.contains("USAGE: spendiq"), "\(arguments)")
        }
    }

    @Test func aSubcommandThatDoesNotExistIsAUsageMistake() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let spendiq = CommandProcess.spendiq(dataDirectory: scratch.folder("stranger"), server: unreachableServer)
        for arguments in [["bogus"], ["bogus", "--help"], ["help", "bogus"]] {
            let refused = try await spendiq.run(arguments)
            #expect(refused.status == 64 && refused.isOneLineError, "\(arguments): \(refused.status) \(refused.stdout)\(refused.stderr)")
            #expect(refused.stderr == "spendiq: No command 'bogus': spendiq --help lists them\n", "\(arguments)")
        }
        #expect(try await spendiq.run(["help", "help"]).status == 0)
    }

    @Test func settingsThatCannotBeUsedAreUsageMistakes() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let spendiq = CommandProcess.spendiq(dataDirectory: scratch.folder("stranger"), server: unreachableServer)
        for (arguments, environment, says) in [
            (["--data-dir", "", "list"], [:], "--data-dir needs a folder's path"),
            (["list"], ["SPENDIQ_ANSWER_TIMEOUT": "0"], "SPENDIQ_ANSWER_TIMEOUT must be a number of seconds from 1 to 300"),
            (["list"], ["TZ": "Nowhere/Bogus"], "is not a time zone"),
        ] as [([String], [String: String], String)] {
            let refused = try await spendiq.run(arguments, environment: environment)
            #expect(refused.status == 64 && refused.isOneLineError && refused.stderr.contains(says), "\(arguments): \(refused.stderr)")
        }
        // An empty variable is no setting
        let unset = try await spendiq.run(["list"], answerTimeout: nil, environment: ["SPENDIQ_ANSWER_TIMEOUT": ""])
        #expect(unset.stderr == "spendiq: Not signed in: run `spendiq login --email EMAIL` first\n", "\(unset.stderr)")
    }
}
