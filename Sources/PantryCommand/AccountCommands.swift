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

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Confirm your email with the mailed code (valid 10 minutes, 5 tries), or ask for a new one.",
        discussion: "Household invitations sent to your email address show once you confirm it. Example: pantry verify 042917")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var verify: VerifyOptions

    func run() async throws {
        let app = try global.app()
        if verify.resend {
            Terminal.say(VerifyOptions.resent(to: try await app.resendCode(email: verify.email)))
            return
        }
        try await app.verify(code: verify.code ?? "", email: verify.email)
        Terminal.say("Email confirmed: household invitations sent to it now show in pantry household invitations.")
    }
}

struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Sign in (offline too, for 7 days after the last online sign-in).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var credentials: SignInOptions

    func run() async throws {
        let app = try global.app()
        let signIn = try await app.login(email: credentials.email, password: credentials.password()) { engine, fetch in
            await FirstSyncBar.whileRunning(engine, fetch)
        }
        print(DeviceWords.pantry.signedIn(signIn.pantry.session.username, online: signIn.online,
                                          note: signIn.pulled > 0 ? "Fetched \(signIn.pulled) record(s): your other devices' and what is shared with you." : nil))
        if let stopped = signIn.fetchStopped { print(DeviceWords.pantry.fetchStopped(stopped)) }
    }
}

struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign out and remove your data from this device.",
        discussion: "Changes still waiting are sent first when the server can be reached. Sign-out is refused while some wait or were refused by the server, unless --discard-refused (drop the refused ones) or --force (lose everything not on the server).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var signOut: SignOutOptions

    func run() async throws {
        let app = try global.app()
        // NB: what only waits for the network is sent first if the server answers (`AppHost.logout`).
        Terminal.say(try await DeviceWords.pantry.signOut { try await app.logout(discarding: signOut.discarding) })
    }
}

struct Whoami: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Who is signed in on this device.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        guard let account = try await global.app().whoami() else { throw PantryError.notSignedIn }
        print(try DeviceWords.account(account, json: output.json))
    }
}

extension DeviceWords {
    /// The pantry's words for its outbox.
    static let pantry = DeviceWords(command: "pantry", entries: "changes", one: "change(s)", many: "change(s)")
}
