import Foundation

/// The `eventual-server` executable, built beside the test bundle.
enum ServerExecutable {
    static var path: String {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while folder.path != "/" {
            let candidate = folder.appendingPathComponent("eventual-server")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            folder = folder.deletingLastPathComponent()
        }
        return "eventual-server"
    }

    /// Runs `eventual-server ARGUMENTS` to its end (on SQLite unless the arguments say otherwise).
    static func run(_ arguments: [String]) async throws -> ProcessLaunch.Output {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "DATABASE_URL")
        return try await ProcessLaunch.run(path, arguments, environment: environment)
    }
}
