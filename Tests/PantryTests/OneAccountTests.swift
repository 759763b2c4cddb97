import EventualKit
import Foundation
import Testing

/// One account serves the three apps, and a person is told so in the apps' words: never the
/// server's raw refusal, never a developer's instructions.
@Suite("One account for every app, said plainly", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct OneAccountTests {
    @Test func anEmailRegisteredInOneAppIsToldToLogInInTheOthers() async throws {
        try await withLiveServer { live, scratch in
            // Given a person registered from the pantry
            let pantry = CommandProcess.pantry(dataDirectory: scratch.folder("pantry"), server: live)
            let (email, _) = try await pantry.signUp(name: "cook")
            // When they register again from SpendiQ and SustainU
            for app in [CommandProcess.spendiq(dataDirectory: scratch.folder("spendiq"), server: live),
                        CommandProcess("sustainu", dataDirectory: scratch.folder("sustainu"), server: live)] {
                let again = try await app.run(["register", "--username", "cook_again", "--email", email, "--password-stdin"],
                                              input: "long-password\n")
                // Then each says the account exists, serves every app, and how to use it, in one line
                #expect(again.status != 0, "\(app.name): \(again.stdout)")
                #expect(again.stderr.contains("\(email) already has an account"), "\(app.name): \(again.stderr)")
                #expect(again.stderr.contains("Tracking My Pantry") && again.stderr.contains("log in"), "\(app.name): \(again.stderr)")
                #expect(!again.stderr.contains("email is already registered"), "\(app.name): \(again.stderr)")
                #expect(again.stderr.split(separator: "\n").count == 1, "\(app.name): \(again.stderr)")
                // And logging in with the same password works there (SpendiQ first asks for the mailed code)
                let login = try await app.run(["login", "--email", email, "--password-stdin"], input: "long-password\n")
                if app.name == "spendiq" {
                    #expect(login.stderr.contains("verif"), "\(login.stderr)")
                } else {
                    #expect(login.status == 0, "\(app.name): \(login.stderr)")
                }
            }
        }
    }

    @Test func aSignInEndedOnTheServerIsSaidAsSignInAgainNotAsAHeader() async throws {
        try await withLiveServer { live, scratch in
            // Given a signed-in pantry with an item waiting
            let pantry = CommandProcess.pantry(dataDirectory: scratch.folder("pantry"), server: live)
            _ = try await pantry.signUp(name: "ended")
            // When its session ends on the server (signed out from elsewhere)
            let token = try CommandLineSecrecyTests.savedToken(in: pantry.dataDirectory)
            let link = ServerLink(serverURL: live, timeout: .seconds(10)) { token }
            _ = try await link.client.logout()
            #expect(try await pantry.run(["add", "--name", "Tea"]).status == 0)
            // Then sync says to sign in again, in a person's words, twice over (the token is then locked)
            for _ in 0..<2 {
                let sync = try await pantry.run(["sync"])
                let said = sync.stdout + sync.stderr
                #expect(said.lowercased().contains("sign in again") || said.contains("pantry login"), "\(said)")
                #expect(!said.contains("Authorization") && !said.contains("Bearer") && !said.contains("Missing access token"), "\(said)")
            }
        }
    }
}

/// With two households and none chosen, a household command says which option names one.
@Suite("Household commands name their option", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct HouseholdOptionWordsTests {
    @Test func twoHouseholdsAndNoneChosenNameTheCommandsOwnOption() async throws {
        try await withLiveServer { live, scratch in
            let pantry = CommandProcess.pantry(dataDirectory: scratch.folder("pantry"), server: live)
            _ = try await pantry.signUp(name: "two")
            for name in ["Home", "Cabin"] { #expect(try await pantry.run(["household", "create", name]).status == 0) }
            for (arguments, option) in [(["household", "invite", "bob"], "--to"), (["household", "role", "bob", "viewer"], "--in"),
                                        (["household", "remove", "bob"], "--from")] {
                let said = try await pantry.run(arguments)
                #expect(said.isOneLineError, "\(arguments): \(said.stdout)\(said.stderr)")
                #expect(said.stderr.contains("You are in 2 households: say which with \(option) NAME"), "\(arguments): \(said.stderr)")
            }
            // And a household made offline waits in status as a household, the pantry's word, not a "space"
            let offline = CommandProcess.pantry(dataDirectory: pantry.dataDirectory, server: unreachableServer)
            #expect(try await offline.run(["household", "create", "Attic"]).status == 0)
            let status = try await offline.run(["status"])
            #expect(status.stdout.contains("new household Attic") && !status.stdout.contains("space"), "\(status.stdout)")
        }
    }
}

/// The bar `pantry sync` draws on a terminal while many changes go says what it counts.
@Suite("pantry sync's bar is labelled", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct SyncBarWordsTests {
    @Test func theBarSaysItSendsWaitingChanges() async throws {
        try await withLiveServer { live, scratch in
            let pantry = CommandProcess.pantry(dataDirectory: scratch.folder("pantry"), server: live)
            _ = try await pantry.signUp(name: "bar")
            let offline = CommandProcess.pantry(dataDirectory: pantry.dataDirectory, server: unreachableServer)
            for index in 1...20 { #expect(try await offline.run(["add", "--name", "Jar \(index)"]).status == 0) }
            let sync = try await pantry.run(["sync"], onTerminal: true)
            #expect(sync.status == 0, "\(sync.stderr)")
            #expect(sync.stdout.contains("Sending [") && sync.stdout.contains("/20 waiting change(s)"), "\(sync.stdout)")
        }
    }
}

/// Help that a week of use found out of date says what the commands do now.
@Suite("Help says what the commands do now", .timeLimit(.minutes(2)))
struct HelpTextTests {
    /// Help as one line of words: it is wrapped to the terminal's width.
    private func flat(_ text: String) -> String { text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }

    @Test func retryEditAndAcceptHelpMatchTheirBehaviour() async throws {
        let scratch = try ScratchFolder()
        let pantry = CommandProcess.pantry(dataDirectory: scratch.url, server: unreachableServer)
        let spendiq = CommandProcess.spendiq(dataDirectory: scratch.url, server: unreachableServer)
        // retry sends again what is not a record's change; a change is settled
        let retry = flat(try await pantry.run(["retry", "--help"]).stdout)
        #expect(retry.contains("pantry failures") && retry.contains("pantry settle") && !retry.contains("pantry status"), "\(retry)")
        let spendiqRetry = flat(try await spendiq.run(["retry", "--help"]).stdout)
        #expect(spendiqRetry.contains("spendiq failures") && spendiqRetry.contains("spendiq settle"), "\(spendiqRetry)")
        // edit keeps a quantity not given: no "default 1"
        let edit = flat(try await pantry.run(["edit", "--help"]).stdout)
        #expect(!edit.contains("default 1") && edit.contains("a new item: 1 unless given"), "\(edit)")
        // accept brings the shared accounts at once when the server answers
        let accept = flat(try await spendiq.run(["help", "accept"]).stdout)
        #expect(accept.contains("arrive now when the server answers"), "\(accept)")
    }
}

/// Against a server that accepts the connection and never answers, the members of a household
/// this device has heard are shown within a moment (they waited 5.1 s before).
@Suite("Household members do not wait on a silent server", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct HouseholdSilentServerTests {
    @Test func membersAnswerFromTheDevice() async throws {
        try await withLiveServer { live, scratch in
            // Given Ann with a household Home whose members this device has heard
            let ann = try await PantryPerson.signUp("ann", server: live, scratch: scratch)
            try await ann.run(["household", "create", "Home"])
            try await ann.run(["household", "members", "Home"])
            try await withSilentServer { silent in
                // When the server goes silent, the members are listed from the device at once
                let started = ContinuousClock.now
                // NB: the command's own budgets (not a busy machine's 20 s): what a person meets.
                let outcome = try await ann.pantry.run(["household", "members", "Home"], server: silent, answerTimeout: nil)
                let took = ContinuousClock.now - started
                #expect(outcome.status == 0 && outcome.stdout.contains(ann.username), "\(outcome.stdout)\(outcome.stderr)")
                // NB: 5.1 s before; the bound leaves a busy machine 2 s to start the process.
                #expect(took < .milliseconds(2500), "members took \(took)")
            }
        }
    }
}
