import ArgumentParser
import EventualKit

/// `--email` and `--password-stdin`, as every app's `login` takes them.
public struct SignInOptions: ParsableArguments {
    @Option(help: "The email address you registered with.") public var email: String
    @Flag(name: .customLong("password-stdin"), help: "Read the password from standard input.") public var passwordStdin = false

    public init() {}

    /// The password, from standard input or asked for on the terminal (never echoed).
    public func password() throws -> String { try Terminal.password(fromStdin: passwordStdin) }
}

/// `--discard-refused` and `--force`, as every app's `logout` takes them.
public struct SignOutOptions: ParsableArguments {
    @Flag(name: .customLong("discard-refused"), help: "Drop what the server refused (status lists it); still refused while anything else waits.")
    public var discardRefused = false
    @Flag(help: "Sign out even though some of what you did has not reached the server: waiting and refused, it is lost.")
    public var force = false

    public init() {}

    /// What the sign-out may throw away.
    public var discarding: SignOutDiscard { force ? .everything : discardRefused ? .failed : .nothing }
}

/// The id of an entry the server refused, as every app's `retry` and `discard` take it.
public struct RefusedEntryArgument: ParsableArguments {
    @Argument(help: "The refused entry's ID, as status shows it (8 characters), or its whole id.") public var id: String

    public init() {}
}
