import CommandLineSupport
import ArgumentParser
import EventualKit
import Foundation
import Spending

struct Register: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create an account (needs the network); a 6-digit code is mailed to you.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "The name others see, e.g. alice.") var username: String
    @Option(help: "Your email address; you sign in with it.") var email: String
    @Flag(name: .customLong("password-stdin"), help: "Read the password from standard input.") var passwordStdin = false

    func run() async throws {
        let app = try global.app()
        let password = try Terminal.password(fromStdin: passwordStdin)
        let account = try await app.register(username: username, email: email, password: password)
        Terminal.say("Registered \(account.username) <\(account.email)>. We mailed you a code: spendiq verify CODE")
    }
}

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Confirm your email with the mailed code (valid 10 minutes, 5 tries), or ask for a new one.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var verify: VerifyOptions

    func run() async throws {
        let app = try global.app()
        if verify.resend {
            Terminal.say(VerifyOptions.resent(to: try await app.resendCode(email: verify.email)))
            return
        }
        let address = verify.email ?? app.pendingRegistration()
        try await app.verify(code: verify.code ?? "", email: verify.email)
        Terminal.say("Email verified. Now: spendiq login --email \(address ?? "EMAIL")")
    }
}

struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Sign in (offline too, for 7 days after the last online sign-in).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var credentials: SignInOptions

    func run() async throws {
        let app = try global.app()
        let signIn = try await app.login(email: credentials.email, password: credentials.password()) { engine, fetch in
            await FirstSyncBar.whileRunning(engine, readyNote: "the last 30 days are in", fetch)
        }
        Terminal.say(DeviceWords.spendiq.signedIn(signIn.spending.session.username, online: signIn.online,
                                                  note: signIn.pulled > 0 ? "Fetched \(signIn.pulled) record(s): your other devices' and what is shared with you." : nil))
        if let stopped = signIn.fetchStopped { Terminal.say(DeviceWords.spendiq.fetchStopped(stopped)) }
    }
}

struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign out and remove your data from this device (waiting changes are sent first when the server answers).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var signOut: SignOutOptions

    func run() async throws {
        let app = try global.app(creating: false)
        Terminal.say(try await DeviceWords.spendiq.signOut { try await app.logout(discarding: signOut.discarding) })
    }
}

struct Whoami: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Who is signed in on this device (the 7-day rule applies).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        guard let account = try await global.app(creating: false).whoami() else { throw SpendingError.notSignedIn }
        print(try DeviceWords.account(account, json: output.json))
    }
}

extension DeviceWords {
    /// SpendiQ's words for its outbox.
    static let spendiq = DeviceWords(command: "spendiq", entries: "changes", one: "change(s)", many: "change(s)")
}
