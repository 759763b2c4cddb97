import Foundation
import Testing

/// Every option of `sustainu` before or after its subcommand's name, as a person types them.
@Suite("The sustainu command takes options before or after the subcommand", .tags(.endToEnd), .timeLimit(.minutes(3)))
struct CommandLineOptionOrderTests {
    @Test func jsonAndTheSubcommandsOwnOptionsWorkBeforeItsName() async throws {
        try await withLiveServer { server, scratch in
            // Given a signed-in phone
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            let (_, username) = try await phone.signUp()
            // When --json comes before or after the subcommand's name
            for arguments in [["whoami", "--json"], ["--json", "whoami"]] {
                let run = try await phone.offline(arguments)
                // Then the answer is JSON either way
                #expect(run.status == 0, "\(arguments): \(run.stderr)")
                #expect((try json(run) as? [String: Any])?["username"] as? String == username, "\(arguments): \(run.stdout)")
            }
            for arguments in [["scans", "--json"], ["--json", "scans"]] {
                let run = try await phone.offline(arguments)
                let scans = try json(run) as? [Any]
                #expect(run.status == 0 && scans != nil, "\(arguments): \(run.stdout)\(run.stderr)")
            }
            // And an option of the subcommand's own, with its value, before its name
            let limited = try await phone.offline(["--limit", "0", "leaderboard"])
            #expect(limited.status == 64 && limited.stderr.contains("1 to 100 people"), "\(limited.stderr)")
        }
    }
}
