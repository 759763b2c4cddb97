import Foundation
import Testing

/// A person's `pantry` device, signed up and signed in through the executable.
struct PantryPerson: Sendable {
    let pantry: CommandProcess
    let username: String

    static func signUp(_ name: String, server: URL, scratch: ScratchFolder) async throws -> PantryPerson {
        let pantry = CommandProcess.pantry(dataDirectory: scratch.folder(name), server: server)
        return PantryPerson(pantry: pantry, username: try await pantry.signUp(name: name).username)
    }

    /// Runs the command, expecting it to succeed.
    @discardableResult
    func run(_ arguments: [String], server: URL? = nil) async throws -> CommandOutcome {
        let outcome = try await pantry.run(arguments, server: server)
        #expect(outcome.status == 0, "pantry \(arguments.joined(separator: " ")): \(outcome.stderr)")
        return outcome
    }

    /// The items `pantry list --json` shows.
    func items(server: URL? = nil) async throws -> [[String: Any]] {
        try jsonItems(try await run(["list", "--json"], server: server))
    }

    /// The id of the item called `name`.
    func itemID(_ name: String) async throws -> String {
        try #require(try await items().first { $0["name"] as? String == name }?["id"] as? String, "no \(name)")
    }
}

/// Ann's household "Home" with Bob in it as `role`, made through the commands, both online.
func household(ann: PantryPerson, bob: PantryPerson, role: String = "editor") async throws {
    #expect(try await ann.run(["household", "create", "Home"]).stdout.contains("Created the household Home"))
    #expect(try await ann.run(["household", "invite", bob.username, "--role", role]).stdout.contains("Invited \(bob.username) to Home as \(role)."))
    let invitations = try jsonObject(try await bob.run(["household", "invitations", "--json"]))
    let invitation = try #require((invitations["invitations"] as? [[String: Any]])?.first, "\(invitations)")
    #expect(invitation["space"] as? String == "Home" && invitation["invitedBy"] as? String == ann.username)
    let id = try #require(invitation["id"] as? String)
    let joined = try await bob.run(["household", "accept", String(id.suffix(8))])
    #expect(joined.stdout.contains("Joined Home"), "\(joined.stdout)")
}
