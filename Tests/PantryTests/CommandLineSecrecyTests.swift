import Foundation
import Testing

/// What `pantry` prints when the server fails: one short line built from the kind of failure,
/// never the password, the token, the request or a build path.
@Suite("The pantry command keeps secrets when the server fails", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct CommandLineSecrecyTests {
    static let password = "secret-password-77"

    /// The three ways a server fails: it refuses connections, accepts and never answers, answers 500.
    func withFailingServers(_ body: @Sendable (_ servers: [(name: String, url: URL)]) async throws -> Void) async throws {
        let broken = try await FakeVisionServer.start(.raw(status: 500, body: #"{"error":true,"reason":"internal error"}"#))
        do {
            try await withSilentServer { silent in
                try await body([("refused", unreachableServer), ("silent", silent),
                                ("500", URL(string: "http://127.0.0.1:\(broken.baseURL.port!)")!)])
            }
            await broken.stop()
        } catch {
            await broken.stop()
            throw error
        }
    }

    func expectClean(_ outcome: CommandOutcome, _ what: String, token: String?, sourceLocation: SourceLocation = #_sourceLocation) {
        let text = outcome.stderr
        #expect(!text.contains(Self.password), "\(what): \(text)", sourceLocation: sourceLocation)
        if let token { #expect(!text.contains(token), "\(what): \(text)", sourceLocation: sourceLocation) }
        for leak in ["Bearer", "Input", "operationID", "requestBody", "Client error", "Middleware", ".swift", "/Sources/", "Optional("] {
            #expect(!text.contains(leak), "\(what): \(leak) in \(text)", sourceLocation: sourceLocation)
        }
        #expect(text.split(separator: "\n").count <= 1, "\(what): \(text)", sourceLocation: sourceLocation)
        #expect(text.count < 200, "\(what): \(text.count) characters: \(text)", sourceLocation: sourceLocation)
    }

    @Test func registerLoginAndSyncSayFailuresInOneCleanLine() async throws {
        try await withLiveServer { live, scratch in
            // Given a device signed in online
            let pantry = CommandProcess.pantry(dataDirectory: scratch.folder("device"), server: live)
            let suffix = UUID().uuidString.prefix(6).lowercased()
            let email = "secret.\(suffix)@example.com"
            #expect(try await pantry.run(["register", "--username", "s_\(suffix)", "--email", email, "--password-stdin"],
                                         input: Self.password + "\n").status == 0)
            #expect(try await pantry.run(["login", "--email", email, "--password-stdin"], input: Self.password + "\n").status == 0)
            #expect(try await pantry.run(["add", "--name", "Tea"]).status == 0)
            let token = try Self.savedToken(in: pantry.dataDirectory)
            let fresh = CommandProcess.pantry(dataDirectory: scratch.folder("fresh"), server: live)
            try await withFailingServers { servers in
                for (name, server) in servers {
                    // When each command meets a failing server
                    let environment = ["PANTRY_ANSWER_TIMEOUT": "1"]
                    let register = try await fresh.run(["register", "--username", "t_\(suffix)", "--email", "t.\(suffix)@example.com",
                                                        "--password-stdin"], input: Self.password + "\n", server: server, environment: environment)
                    let login = try await fresh.run(["login", "--email", email, "--password-stdin"], input: Self.password + "\n",
                                                    server: server, environment: environment)
                    let sync = try await pantry.run(["sync"], server: server, environment: environment)
                    // Then each says so in one clean line, and fails
                    for (command, outcome) in [("register", register), ("login", login), ("sync", sync)] {
                        #expect(outcome.isOneLineError, "\(command) against a \(name) server: \(outcome.stderr)")
                        expectClean(outcome, "\(command) against a \(name) server", token: token)
                    }
                }
            }
        }
    }

    /// The access token the device saved at sign-in (to look for it in what is printed).
    static func savedToken(in folder: URL) throws -> String {
        let file = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.first { $0.lastPathComponent.hasPrefix("session") })
        let session = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        return try #require(session["accessToken"] as? String)
    }
}
