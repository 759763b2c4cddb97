import ArgumentParser
import EventualAPI
import EventualKit
import Foundation

// The account's subcommands of every app (`AppCommand.accountCommands`), written once: the app
// only names them in its words.

/// `register`: an account on the server; one account serves every app of the platform.
public struct Register<App: AppCommand>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "register",
            abstract: "Create an account on the server (needs the network)"
                + (App.User.deviceApp.registration.needsVerifiedEmail ? "; a 6-digit code is mailed to you." : "."),
            usage: "\(App.words.command) register --username NAME --email EMAIL [--password-stdin]",
            discussion: "One account serves every app on the server (\(EventualApp.builtIn.map(\.title).joined(separator: ", ")) and"
                + " those deployed beside them): if you have one already, sign in with it.")
    }

    @OptionGroup var global: SharedOptions<App>
    @Option(help: "The name others see, e.g. alice.") var username: String
    @Option(help: "Your email address; you sign in with it.") var email: String
    @Flag(name: .customLong("password-stdin"), help: "Read the password from standard input.") var passwordStdin = false

    public init() {}

    public func validate() throws {
        try usageCheck {
            if username.trimmingCharacters(in: .whitespaces).isEmpty { throw CLIError("A username is needed: --username NAME, e.g. alice") }
            if !email.contains("@") {
                throw CLIError("Email '\(Terminal.oneLine(String(email.prefix(80))))' is not an address: use one such as name@example.com")
            }
        }
    }

    public func run() async throws {
        let app = try App.app(global, creating: true)
        let password = try Terminal.password(fromStdin: passwordStdin)
        let account: DeviceAccount
        do {
            account = try await app.register(username: username, email: email, password: password)
        } catch AccountError.invalid(let message) where Self.isRuleRefusal(message) {
            // NB: what was typed breaks the server's rules: a usage mistake (64), not a failure.
            throw ValidationError(message.prefix(1).uppercased() + message.dropFirst())
        }
        Terminal.say(App.registered(account))
    }

    /// The server's answer to a username, email or password its rules refuse ("password must be
    /// 8 to 72 characters long"), not to one already taken.
    static func isRuleRefusal(_ message: String) -> Bool {
        ["username", "email", "password"].contains { field in message.hasPrefix("\(field) must ") || message.hasPrefix("\(field) may ") }
    }
}

/// `verify`: confirms the email with the mailed code, or asks for a new one.
public struct Verify<App: AppCommand>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "verify",
            abstract: "Confirm your email with the mailed code (valid 10 minutes, 5 tries), or ask for a new one.",
            discussion: "Invitations sent to your email address show once you confirm it. Example: \(App.words.command) verify 042917")
    }

    @OptionGroup var global: SharedOptions<App>
    @OptionGroup var verify: VerifyOptions

    public init() {}

    public func run() async throws {
        let app = try App.app(global, creating: true)
        if verify.resend {
            Terminal.say(VerifyOptions.resent(to: try await app.resendCode(email: verify.email)))
            return
        }
        let address = verify.email ?? app.pendingRegistration()
        try await app.verify(code: verify.code ?? "", email: verify.email)
        Terminal.say(App.verified(address))
    }
}

/// `login`: signs in, online with a first sync, or offline within the app's offline age.
public struct Login<App: AppCommand>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "login", abstract: "Sign in (offline too, for 7 days after the last online sign-in).",
            usage: "\(App.words.command) login --email EMAIL [--password-stdin]")
    }

    @OptionGroup var global: SharedOptions<App>
    @OptionGroup var credentials: SignInOptions

    public init() {}

    public func run() async throws {
        let app = try App.app(global, creating: true)
        let signIn = try await app.login(email: credentials.email, password: credentials.password()) { engine, fetch in
            await FirstSyncBar.whileRunning(engine, readyNote: App.firstSyncReadyNote, fetch)
        }
        Terminal.say(App.words.signedIn(signIn.user.device.session.username, online: signIn.online, note: App.signedInNote(signIn)))
        if let stopped = signIn.fetchStopped { Terminal.say(App.words.fetchStopped(stopped)) }
        // NB: a server without this app, or with an older declaration of it, is said now, once.
        if signIn.online, let words = await app.accounts.servedApp()?.words { Terminal.say(words) }
        await App.signedIn(signIn.user)
    }
}

/// `logout`: signs out and removes the person's data from this device.
public struct Logout<App: AppCommand>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "logout", abstract: "Sign out and remove your data from this device (offline too).",
            usage: "\(App.words.command) logout [--discard-refused | --force]",
            discussion: "What waits is sent first when the server answers at once. Sign-out is refused while some waits or was "
                + "refused by the server, unless --discard-refused (drop the refused) or --force (lose everything not on the server).")
    }

    @OptionGroup var global: SharedOptions<App>
    @OptionGroup var signOut: SignOutOptions

    public init() {}

    public func run() async throws {
        let app = try App.app(global, creating: false)
        do {
            // NB: what only waits for the network is sent first if the server answers (`AppHost.logout`).
            Terminal.say(try await App.words.signOut { try await app.logout(discarding: signOut.discarding) })
        } catch AccountError.notSignedIn {
            throw CLIError("Nobody is signed in on this device")
        }
    }
}

/// `whoami`: who is signed in here (the app's offline age applies).
public struct Whoami<App: AppCommand>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "whoami", abstract: "Who is signed in on this device.", usage: "\(App.words.command) whoami [--json]")
    }

    @OptionGroup var global: SharedOptions<App>
    @OptionGroup var output: OutputOptions

    public init() {}

    public func run() async throws {
        guard let account = try await App.app(global, creating: false).whoami() else {
            throw CLIError("Not signed in: run `\(App.words.command) login --email EMAIL` first")
        }
        print(try DeviceWords.account(account, json: output.json))
    }
}
