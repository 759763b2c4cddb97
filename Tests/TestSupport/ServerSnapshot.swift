import EventualStorage
import Foundation

/// A copy of a server's database taken with the tools an operator backs up with, and put back
/// over the live database later: sqlite3's `.backup` and `.restore` (SQLite's online backup), or
/// `pg_dump` and `pg_restore --clean`. What a restore from a backup does to a server, while it runs.
public struct ServerSnapshot: Sendable {
    private let location: DatabaseLocation
    private let file: String

    /// Copies the database at `location` now.
    public static func take(of location: DatabaseLocation) async throws -> ServerSnapshot {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-snapshot-\(UUID().uuidString)").path
        switch location {
        case .sqlite(let path): try await run("sqlite3", [path, ".backup '\(file)'"])
        case .postgres(let url): try await run("pg_dump", ["--format=custom", "--no-owner", "--file=\(file)", url])
        }
        return ServerSnapshot(location: location, file: file)
    }

    /// Puts the copy back over the database it was taken of.
    public func restore() async throws {
        switch location {
        case .sqlite(let path): try await Self.run("sqlite3", [path, ".restore '\(file)'"])
        case .postgres(let url):
            try await Self.run("pg_restore", ["--clean", "--if-exists", "--no-owner", "--single-transaction", "--dbname=\(url)", file])
        }
    }

    /// Removes the copy.
    public func remove() { try? FileManager.default.removeItem(atPath: file) }

    private static func run(_ tool: String, _ arguments: [String]) async throws {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
            + ["/usr/bin"] + ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
                .sorted().reversed().map { "/usr/lib/postgresql/\($0)/bin" }
        guard let executable = paths.map({ "\($0)/\(tool)" }).first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw TestFailure("\(tool) is not installed (scripts/test.sh installs it)")
        }
        let output = try await ProcessLaunch.run(executable, arguments, environment: ProcessInfo.processInfo.environment)
        guard output.status == 0 else { throw TestFailure("\(tool) failed (\(output.status)): \(output.stderr.prefix(400))") }
    }
}
