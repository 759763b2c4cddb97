import Foundation
import Testing

/// One of the apps' commands on a device, run as a person would: its own data directory
/// (`NAME_DATA_DIR`), a server (`NAME_SERVER`), no colours, and patient answers.
public struct CommandProcess: Sendable {
    /// `pantry`, `sustainu` or `spendiq`.
    public let name: String
    public let dataDirectory: URL
    public let server: URL
    /// Set for every run of this device (a time zone, a terminal width); a run's own win.
    public let environment: [String: String]

    public init(_ name: String, dataDirectory: URL, server: URL, environment: [String: String] = [:]) {
        self.name = name
        self.dataDirectory = dataDirectory
        self.server = server
        self.environment = environment
    }

    /// A `pantry` device.
    public static func pantry(dataDirectory: URL, server: URL) -> CommandProcess {
        CommandProcess("pantry", dataDirectory: dataDirectory, server: server)
    }

    /// A `spendiq` device.
    public static func spendiq(dataDirectory: URL, server: URL) -> CommandProcess {
        CommandProcess("spendiq", dataDirectory: dataDirectory, server: server)
    }

    /// `script`, which runs a command on a pseudo-terminal: how a test answers a prompt.
    public static let script = "/usr/bin/script"

    /// Runs `NAME ARGUMENTS` with `input` on stdin, never on a cooperative thread. With `onTerminal`,
    /// stdin is a terminal (through `script`), as when a person types the answers; what the
    /// terminal shows, input echoed included, is then all in `stdout`.
    ///
    /// - Parameter server: another server for this run (`unreachableServer` for a basement).
    /// - Parameter answerTimeout: the seconds the command gives the server (`NAME_ANSWER_TIMEOUT`);
    ///   20 by default, as a machine busy with the whole suite may take seconds to answer; nil keeps
    ///   the command's own budgets.
    public func run(_ arguments: [String], input: String? = nil, server: URL? = nil, onTerminal: Bool = false,
                    answerTimeout: Int? = 20, environment overrides: [String: String] = [:]) async throws -> CommandOutcome {
        let executable = BuiltExecutable.path(name)
        let outcome: CommandOutcome
        if onTerminal {
            let command = ([executable] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            outcome = try await BuiltExecutable.run(Self.script, ["-qec", command.joined(separator: " "), "/dev/null"], input: input,
                                                    environment: runEnvironment(server, answerTimeout, overrides))
        } else {
            outcome = try await BuiltExecutable.run(executable, arguments, input: input,
                                                    environment: runEnvironment(server, answerTimeout, overrides))
        }
        return CommandOutcome(command: name, status: outcome.status, stdout: outcome.stdout, stderr: outcome.stderr)
    }

    /// Runs `NAME ARGUMENTS` with its standard output written to `path` (`/dev/full`, say).
    public func run(_ arguments: [String], stdoutTo path: String, server: URL? = nil,
                    environment overrides: [String: String] = [:]) async throws -> CommandOutcome {
        let redirected = overrides.merging(["TEST_STDOUT": path]) { $1 }
        let outcome = try await BuiltExecutable.run("/bin/sh", ["-c", "exec \"$0\" \"$@\" > \"$TEST_STDOUT\"", BuiltExecutable.path(name)] + arguments,
                                                    environment: runEnvironment(server, 20, redirected))
        return CommandOutcome(command: name, status: outcome.status, stdout: outcome.stdout, stderr: outcome.stderr)
    }

    /// Runs `NAME ARGUMENTS` with the file at `path` on its standard input (a photo piped in).
    public func run(_ arguments: [String], stdinFrom path: String, server: URL? = nil) async throws -> CommandOutcome {
        let outcome = try await BuiltExecutable.run("/bin/sh", ["-c", "exec \"$0\" \"$@\" < \"$TEST_STDIN\"", BuiltExecutable.path(name)] + arguments,
                                                    environment: runEnvironment(server, 20, ["TEST_STDIN": path]))
        return CommandOutcome(command: name, status: outcome.status, stdout: outcome.stdout, stderr: outcome.stderr)
    }

    /// Registers a fresh person (`NAME_SUFFIX`, `NAME.SUFFIX@example.com`, password `long-password`)
    /// and signs them in online; `beforeLogin` runs in between (a verification, say).
    public func signUp(name person: String = "user",
                       beforeLogin: (_ email: String) async throws -> Void = { _ in }) async throws -> (email: String, username: String) {
        let suffix = UUID().uuidString.prefix(6).lowercased()
        let email = "\(person).\(suffix)@example.com", username = "\(person)_\(suffix)"
        let registered = try await run(["register", "--username", username, "--email", email, "--password-stdin"], input: "long-password\n")
        #expect(registered.status == 0, "\(registered.stderr)")
        try await beforeLogin(email)
        let login = try await run(["login", "--email", email, "--password-stdin"], input: "long-password\n")
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout.contains("Signed in as \(username)."), "\(login.stdout)")
        return (email, username)
    }

    private func runEnvironment(_ server: URL?, _ answerTimeout: Int?, _ overrides: [String: String]) -> [String: String] {
        let prefix = name.uppercased()
        var environment = ["\(prefix)_DATA_DIR": dataDirectory.path, "\(prefix)_SERVER": (server ?? self.server).absoluteString]
        if let answerTimeout { environment["\(prefix)_ANSWER_TIMEOUT"] = String(answerTimeout) }
        environment.merge(self.environment) { $1 }
        environment.merge(overrides) { $1 }
        return environment
    }
}
