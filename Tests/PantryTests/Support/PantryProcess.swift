import Foundation

/// Runs the built `pantry` executable as a person would, with a data directory and a server.
struct PantryProcess: Sendable {
    let dataDirectory: URL
    let server: URL

    struct Outcome: Sendable {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// The `pantry` executable, built beside the test bundle.
    static let executable: String = {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("pantry")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            folder = folder.deletingLastPathComponent()
        }
        return "pantry"
    }()

    /// `script`, which runs a command on a pseudo-terminal: how a test answers a prompt.
    static let script = "/usr/bin/script"

    /// Runs `pantry ARGUMENTS` with `input` on stdin; never on a cooperative thread. With
    /// `onTerminal`, stdin is a terminal (through `script`), as when a person types the answers;
    /// what the terminal shows, input echoed included, is then all in `stdout`.
    ///
    /// NB: the server may take 20 s to start answering (`PANTRY_ANSWER_TIMEOUT`) unless
    /// `environment` says otherwise: on a machine busy with the whole suite, 5 s is not always enough.
    func run(_ arguments: [String], input: String? = nil, server: URL? = nil, onTerminal: Bool = false,
             environment overrides: [String: String] = [:]) async throws -> Outcome {
        let executable: String, commandLine: [String]
        if onTerminal {
            let command = ([Self.executable] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            (executable, commandLine) = (Self.script, ["-qec", command.joined(separator: " "), "/dev/null"])
        } else {
            (executable, commandLine) = (Self.executable, arguments)
        }
        var environment = ProcessInfo.processInfo.environment
        environment["PANTRY_DATA_DIR"] = dataDirectory.path
        environment["PANTRY_SERVER"] = (server ?? self.server).absoluteString
        environment["NO_COLOR"] = "1"
        environment["PANTRY_ANSWER_TIMEOUT"] = "20"
        environment.merge(overrides) { $1 }
        let output = try await ProcessLaunch.run(executable, commandLine, environment: environment, input: input)
        return Outcome(status: output.status, stdout: output.stdout, stderr: output.stderr)
    }
}
