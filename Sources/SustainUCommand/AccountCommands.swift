import ArgumentParser
import CommandLineSupport
import EventualKit
import Foundation
import Recycling

struct Register: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create an account on the server (needs the network).",
        usage: "sustainu register --username NAME --email EMAIL [--password-stdin]")
    @OptionGroup var global: GlobalOptions
    @Option(help: "The name others see on the leaderboard, e.g. alice.") var username: String
    @Option(help: "Your email address; you sign in with it.") var email: String
    @Flag(name: .customLong("password-stdin"), help: "Read the password from standard input.") var passwordStdin = false

    func validate() throws {
        try usageCheck {
            if username.trimmingCharacters(in: .whitespaces).isEmpty { throw CLIError("A username is needed: --username NAME, e.g. alice") }
            if !email.contains("@") { throw CLIError("Not an email address: '\(Terminal.oneLine(String(email.prefix(80))))'; use one such as name@example.com") }
        }
    }

    func run() async throws {
        let app = try global.app()
        let password = passwordStdin ? try Terminal.readPasswordFromStdin() : try Terminal.readPassword(prompt: "Password: ")
        let account: DeviceAccount
        do {
            account = try await app.register(username: username, email: email, password: password)
        } catch AccountError.invalid(let message) where Self.isRuleRefusal(message) {
            // NB: what was typed breaks the server's rules: a usage mistake (64), not a failure.
            throw RecyclingError.invalidAccountDetail(message)
        }
        say("Registered \(account.username) <\(account.email)>. Now: sustainu login --email \(account.email)")
    }
}

extension Register {
    /// The server's answer to a username, email or password its rules refuse ("password must be
    /// 8 to 72 characters long"), not to one already taken.
    static func isRuleRefusal(_ message: String) -> Bool {
        ["username", "email", "password"].contains { field in message.hasPrefix("\(field) must ") || message.hasPrefix("\(field) may ") }
    }
}

struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign in (offline too, for 7 days after the last online sign-in).", usage: "sustainu login --email EMAIL [--password-stdin]")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var credentials: SignInOptions

    func run() async throws {
        let app = try global.app()
        let signedIn = try await app.login(email: credentials.email, password: credentials.password())
        say(DeviceWords.sustainu.signedIn(signedIn.recycling.session.username, online: signedIn.online,
                                          note: signedIn.catalogueLoaded ? "Recycling points, packaging catalogue and tips saved for offline use." : nil))
        await announceClassified(signedIn.recycling, json: false)
    }
}

struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign out and remove your data from this device (offline too).", usage: "sustainu logout [--discard-refused | --force]")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var signOut: SignOutOptions

    func run() async throws {
        let app = try global.app()
        do {
            say(try await DeviceWords.sustainu.signOut { try await app.logout(discarding: signOut.discarding) })
        } catch AccountError.notSignedIn {
            throw CLIError("Nobody is signed in on this device")
        }
    }
}

struct Whoami: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Who is signed in on this device.", usage: "sustainu whoami [--json]")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        guard let account = try await global.app().whoami() else { throw RecyclingError.notSignedIn }
        print(try DeviceWords.account(account, json: output.json))
    }
}

extension DeviceWords {
    /// SustainU's words for its outbox.
    static let sustainu = DeviceWords(command: "sustainu", entries: "scans and visits", one: "scan or visit", many: "scans or visits",
                                      signOutQueued: "You are offline: the server will hear of it when it can be reached.",
                                      settleChoices: "--keep-mine | --discard", settlesCalls: true)
}
