import CommandLineSupport
import ArgumentParser
import Foundation
import EventualKit
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
    static let configuration = CommandConfiguration(
        abstract: "Sign out and remove your data from this device.",
        discussion: "Changes still waiting are sent first when the server can be reached. Sign-out is refused while some wait or were refused by the server, unless --discard-refused (drop the refused ones) or --force (lose everything not on the server).")
    @OptionGroup var global: GlobalOptions
    @Flag(name: .customLong("discard-refused"), help: "Drop the changes the server refused (see pantry status); still refused while others wait.")
    var discardRefused = false
    @Flag(help: "Sign out even though some changes have not reached the server: waiting and refused ones are lost.") var force = false

    func run() async throws {
        let app = try global.app()
        // NB: what only waits for the network is sent now if it can be, rather than lost or refused for.
        if let pantry = try? app.open(), (try? pantry.outbox.counts().pending) ?? 0 > 0 {
            _ = try? await pantry.sync()
        }
        let outcome: DeviceSignOut
        do {
            outcome = try await app.logout(discarding: force ? .everything : discardRefused ? .failed : .nothing)
        } catch SessionError.unsentChanges(let waiting, let refused) {
            var parts: [String] = []
            if waiting > 0 { parts.append("\(waiting) change(s) still wait to be sent (the server cannot be reached): run `pantry sync` when online") }
            if refused > 0 { parts.append("\(refused) change(s) were refused by the server: see `pantry status`, then `pantry retry ID` or `pantry discard ID`, or sign out with --discard-refused") }
            throw CLIError(parts.joined(separator: "; ") + "; --force signs out and loses them all")
        }
        var line = "Signed out \(outcome.username)."
        if outcome.discardedWaiting > 0 { line += " \(outcome.discardedWaiting) change(s) that were waiting to be sent are lost." }
        if outcome.discardedRefused > 0 { line += " \(outcome.discardedRefused) change(s) the server refused were dropped." }
        if outcome.revocationQueued { line += " The server will hear of it when it can be reached." }
        Terminal.say(line)
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
