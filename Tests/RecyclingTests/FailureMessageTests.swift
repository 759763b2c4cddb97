import Foundation
import Testing
@testable import Recycling

/// What `sustainu` prints when the server refuses connections, never answers or fails: one
/// sentence on stderr, never a password, a token, a request's body, the generated client's
/// description of an operation, or a path of the build.
@Suite("sustainu's failure messages", .timeLimit(.minutes(4)), .tags(.endToEnd))
struct FailureMessageTests {
    @Test func failuresAgainstARefusingASilentAndAFailingServerPrintNoSecrets() async throws {
        try await withLiveServer { server, scratch in
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            let (email, _) = try await phone.signUp()
            let token = try #require(try RecyclingApp(configuration: RecyclingConfiguration(
                dataDirectory: scratch.folder("phone"), serverURL: server)).accounts.vault.saved()?.accessToken)
            let body = #"{"statusCode":500,"error":"Internal Server Error","message":"the database is gone"}"#
            try await withSilentServer { silent in
                try await withFakeVisionServer(.raw(status: 500, body: body)) { failing in
                    let servers = [("refusing", unreachableServer), ("silent", silent),
                                   ("failing", failing.baseURL.deletingLastPathComponent())]
                    for (kind, bad) in servers {
                        let newcomer = "new.\(kind)@example.com"
                        let runs: [([String], String?)] = [
                            (["register", "--username", "new_\(kind)", "--email", newcomer, "--password-stdin"], "a-secret-password\n"),
                            (["login", "--email", email, "--password-stdin"], "long-password\n"),
                            (["sync"], nil), (["leaderboard"], nil),
                        ]
                        for (arguments, input) in runs {
                            // When a command meets the server
                            let run = try await phone.run(arguments, input: input, via: bad, patient: false)
                            let printed = run.stdout + run.stderr
                            // Then nothing secret, nothing of the request and nothing of the build shows
                            for secret in ["a-secret-password", "long-password", token, newcomer, "Input:", "input:", "Operation",
                                           "operationID", "middleware", "Middleware", "ClientError", "\"password\"", "Bearer",
                                           ".build/", "/Sources/", ".swift", "Optional("] {
                                #expect(!printed.contains(secret), "\(kind) \(arguments[0]) printed \(secret): \(printed)")
                            }
                            // And a failure is one sentence on stderr
                            if run.status != 0 { #expect(run.isOneLineError && run.stderr.count < 300, "\(kind) \(arguments[0]): \(run.stderr)") }
                        }
                        // And what needs the server did fail
                        #expect(try await phone.run(["sync"], via: bad, patient: false).status == 1)
                    }
                }
            }
        }
    }
}
