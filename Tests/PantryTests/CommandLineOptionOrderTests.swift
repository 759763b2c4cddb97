import Foundation
import Testing

/// Every option of `pantry` before or after its subcommand's name, as a person types them.
@Suite("The pantry command takes options before or after the subcommand", .tags(.endToEnd), .timeLimit(.minutes(3)))
struct CommandLineOptionOrderTests {
    @Test func jsonAndTheSubcommandsOwnOptionsWorkBeforeItsName() async throws {
        try await withLiveServer { server, scratch in
            // Given a signed-in device with two items
            let (pantry, _) = try await signedInProcess(server, scratch)
            #expect(try await pantry.run(["add", "--name", "Tea", "--category", "drinks"]).status == 0)
            #expect(try await pantry.run(["add", "--name", "Rice", "--category", "grains"]).status == 0)
            // When --json (and --category with its value) come before, after or around `list`
            for arguments in [["list", "--json", "--category", "drinks"], ["--json", "list", "--category", "drinks"],
                              ["--json", "--category", "drinks", "list"], ["--category=drinks", "list", "--json"]] {
                let listed = try await pantry.run(arguments)
                // Then each is the same listing, in JSON
                #expect(listed.status == 0, "\(arguments): \(listed.stderr)")
                #expect(try jsonItems(listed).compactMap { $0["name"] as? String } == ["Tea"], "\(arguments)")
            }
            // And a shared option before, the subcommand's after, is as good
            let whoami = try await pantry.run(["--json", "--data-dir", pantry.dataDirectory.path, "whoami"])
            #expect(whoami.status == 0, "\(whoami.stderr)")
            #expect(try jsonObject(whoami)["username"] != nil, "\(whoami.stdout)")
        }
    }
}
