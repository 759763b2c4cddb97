import Foundation
import Testing

/// Runs the built `spendiq` executable as a person would, with a data directory and a server.
struct SpendiqProcess: Sendable {
    let dataDirectory: URL
    let server: URL

    struct Outcome: Sendable {
        let status: Int32
        let stdout: String
        let stderr: String

        /// Exactly one line on stderr, nothing on stdout, a non-zero status: how every error looks.
        var isOneLineError: Bool {
            status != 0 && stdout.isEmpty && stderr.hasPrefix("spendiq: ") && stderr.hasSuffix("\n")
                && stderr.split(separator: "\n", omittingEmptySubsequences: false).count == 2
        }

        func json() throws -> Any { try JSONSerialization.jsonObject(with: Data(stdout.utf8)) }
    }

    /// The built `spendiq` beside the tests (SPENDIQ_TEST_EXECUTABLE names another, such as an
    /// earlier build, to see a test fail without its fix).
    static let executable: String = {
        if let given = ProcessInfo.processInfo.environment["SPENDIQ_TEST_EXECUTABLE"], !given.isEmpty { return given }
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("spendiq")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            folder = folder.deletingLastPathComponent()
        }
        return "spendiq"
    }()

    /// Runs `spendiq ARGUMENTS` with `input` on stdin, on a thread of its own.
    func run(_ arguments: [String], input: String? = nil, environment overrides: [String: String] = [:]) async throws -> Outcome {
        let output = try await ProcessLaunch.run(Self.executable, arguments, environment: environment(overrides), input: input)
        return Outcome(status: output.status, stdout: output.stdout, stderr: output.stderr)
    }

    /// Runs `spendiq ARGUMENTS` with its standard output written to `path` (`/dev/full`, say).
    func run(_ arguments: [String], stdoutTo path: String) async throws -> Outcome {
        let output = try await ProcessLaunch.run("/bin/sh", ["-c", "exec \"$0\" \"$@\" > \"$SPENDIQ_TEST_STDOUT\"", Self.executable] + arguments,
                                                 environment: environment(["SPENDIQ_TEST_STDOUT": path]))
        return Outcome(status: output.status, stdout: output.stdout, stderr: output.stderr)
    }

    private func environment(_ overrides: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["SPENDIQ_DATA_DIR"] = dataDirectory.path
        environment["SPENDIQ_SERVER"] = server.absoluteString
        environment["NO_COLOR"] = "1"
        environment["SPENDIQ_ANSWER_TIMEOUT"] = "20"
        environment.merge(overrides) { $1 }
        return environment
    }
}
