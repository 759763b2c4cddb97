import CommandLineSupport
import ArgumentParser
import Foundation
import Pantry

struct Register: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create an account on the server.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "The name others see, e.g. alice.") var username: String
    @Option(help: "Your email address; you sign in with it.") var email: String
    @Flag(name: .customLong("password-stdin"), help: "Read the password from standard input.") var passwordStdin = false

    func run() async throws {
        let app = try global.app()
        let password = passwordStdin ? try Terminal.readPasswordFromStdin() : try Terminal.readPassword(prompt: "Password: ")
        let account = try await app.register(username: username, email: email, password: password)
        print("Registered \(account.username) <\(account.email)>. Now: pantry login --email \(account.email)")
    }
}

struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Sign in (offline too, for 7 days after the last online sign-in).")
    @OptionGroup var global: GlobalOptions
    @Option(help: "The email address you registered with.") var email: String
    @Flag(name: .customLong("password-stdin"), help: "Read the password from standard input.") var passwordStdin = false

    func run() async throws {
        let app = try global.app()
        let password = passwordStdin ? try Terminal.readPasswordFromStdin() : try Terminal.readPassword(prompt: "Password: ")
        let signIn = try await app.login(email: email, password: password)
        let who = signIn.pantry.session.username
        if signIn.online {
            print("Signed in as \(who)." + (signIn.pulled > 0 ? " Fetched \(signIn.pulled) change(s) from your other devices." : ""))
        } else {
            print("Signed in as \(who) " + Terminal.paint("offline", .yellow) + ": changes wait on this device until the server can be reached.")
        }
    }
}

struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Sign out and remove your data from this device.")
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Sign out even though some changes have not reached the server (they are lost).") var force = false

    func run() async throws {
        let outcome = try await global.app().logout(force: force)
        var line = "Signed out \(outcome.username)."
        if outcome.discarded > 0 { line += " \(outcome.discarded) unsent change(s) discarded." }
        if outcome.revocationQueued { line += " The server will hear of it when it can be reached." }
        print(line)
    }
}

struct Whoami: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Who is signed in on this device.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        guard let account = try global.app().whoami() else { throw PantryError.notSignedIn }
        if output.json {
            print(try ItemPrinting.json(account))
        } else {
            print("\(account.username) <\(account.email)>")
        }
    }
}
