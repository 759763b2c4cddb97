import ArgumentParser
import Chores
import CommandLineSupport

/// Sharing: a household is one of the engine's shared spaces, and each change to one is queued (it works offline).
struct Household: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The households you are in; create one, or invite someone (username or email). chores invitations lists yours.",
        usage: "chores household [--json | create NAME | invite USER [--in NAME]]")
    @OptionGroup var global: Options
    @Argument(help: "create or invite.") var action: Action?
    @Argument(help: "A household's name (create), a username or email (invite).") var value: String?
    @Option(name: .customLong("in"), help: "With invite: the household.") var household: String?
    @OptionGroup var output: OutputOptions

    /// A household in `--json`, with the keys the pantry's `household list --json` has.
    struct Shape: Encodable {
        let id, name, role: String
        @JSONNullable var owner: String?
    }

    enum Action: String, ExpressibleByArgument { case create, invite }

    func validate() throws {
        if let action, value == nil { throw ValidationError("household \(action.rawValue) needs one more argument") }
    }

    func run() async throws {
        let user = try await ChoresCommand.open(global, network: true), spaces = user.device.spaces
        switch (action, value) {
        case (.create?, let name?):
            try await user.report("Created the household \(try spaces.space(try await spaces.create(name: name)).name)", .serverAnswer)
        case (.invite?, let who?):
            let to = try household.map { try spaces.space($0) } ?? user.onlyHousehold()!
            try await spaces.invite(who, to: to.id)
            // NB: an invitation the server refuses (no one of that name) is an error now, not at the next sync.
            try await Delivery.send(user.device, words: ChoresCommand.words, done: "Invited \(who) to \(to.name)",
                                    queued: "Invitation of \(who) to \(to.name)", dropsRefusal: true)
        default:
            let households = try spaces.list().filter { $0.kind == .shared }
            if output.json { return print(try Terminal.json(households.map { Shape(id: $0.id, name: $0.name, role: $0.role.rawValue, owner: $0.owner) })) }
            if households.isEmpty { print("You are in no household yet: chores household create NAME, or see chores invitations.") }
            for space in households { print("\(space.name) (you are \(space.role.rawValue))") }
        }
    }
}
