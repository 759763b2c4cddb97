import Foundation
import Testing

@Suite("eventual-server's arguments: a malformed one is one line and exit 64", .timeLimit(.minutes(2)))
struct ServerArgumentsTests {
    @Test(arguments: [["--port", "99999"], ["--port", "0"], ["--port=-1"], ["serve", "--port", "65536"], ["--port", "http"],
                      ["--bcrypt-cost", "2"], ["--max-events-per-user-per-day=-5"], ["--max-failed-verifications", "0"]])
    func aMalformedArgumentIsOneLineAndExit64AndNothingListens(_ arguments: [String]) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-arguments-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await ServerExecutable.run(arguments + ["--database", folder.appendingPathComponent("db.sqlite").path])
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(arguments.first { $0.hasPrefix("--") }.map { String($0.prefix { $0 != "=" }) } ?? "?"), "\(result.stderr)")
        // Then the server never started: nothing listened, no database was made
        #expect(!result.stdout.contains("listening"), "\(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: folder.path))
    }
}
