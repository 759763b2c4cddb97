import Foundation

/// The package's executables (`pantry`, `sustainu`, `spendiq`, `eventual-server`), built beside
/// the test bundle, run to their end.
public enum BuiltExecutable {
    /// The built `name`, or the one `NAME_TEST_EXECUTABLE` names (`SPENDIQ_TEST_EXECUTABLE`, say: an
    /// earlier build, to see a test fail without its fix).
    public static func path(_ name: String) -> String {
        let variable = name.uppercased().replacingOccurrences(of: "-", with: "_") + "_TEST_EXECUTABLE"
        if let given = ProcessInfo.processInfo.environment[variable], !given.isEmpty { return given }
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while folder.path != "/" {
            let candidate = folder.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            folder = folder.deletingLastPathComponent()
        }
        return name
    }

    /// The environment a child gets: this process's, without colours and without the test run's
    /// `DATABASE_URL` (a server started by a test uses the `--database` it is given, SQLite by default).
    public static func environment(_ overrides: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "DATABASE_URL")
        environment["NO_COLOR"] = "1"
        environment.merge(overrides) { $1 }
        return environment
    }

    /// Runs `executable` (a path, or the name of a built one) with `arguments` to its end, `input`
    /// on its stdin, on a thread of its own (see `ProcessLaunch.run`).
    public static func run(_ executable: String, _ arguments: [String], input: String? = nil,
                           environment overrides: [String: String] = [:]) async throws -> CommandOutcome {
        let path = executable.contains("/") ? executable : Self.path(executable)
        let output = try await ProcessLaunch.run(path, arguments, environment: environment(overrides), input: input)
        return CommandOutcome(command: URL(fileURLWithPath: path).lastPathComponent, status: output.status,
                              stdout: output.stdout, stderr: output.stderr)
    }
}
