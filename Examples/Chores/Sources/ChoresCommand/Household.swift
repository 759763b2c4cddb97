import ArgumentParser
import Chores
import CommandLineSupport

/// Sharing: a household is one of the engine's shared spaces, and each change to one is queued (it works offline).
struct Household: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The households you are in; create one, or invite someone (username or email). chores invitations lists yours.",
        usage: "chores household [create NAME | invite USER [--in NAME]]")
    @OptionGroup var global: Options
    @Argument(help: "create or invite.") var action: Action?
    @Argument(help: "A household's name (create), a username or email (invite).") var value: String?
    @Option(name: .customLong("in"), help: "With invite: the household.") var household: String?

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
            try await user.report("Invited \(who) to \(to.name)", .serverAnswer)
        default:
            let households = try spaces.list().filter { $0.kind == .shared }
            if households.isEmpty { print("You are in no household yet: chores household create NAME, or see chores invitations.") }
            for space in households { print("\(space.name) (you are \(space.role.rawValue))") }
        }
    }
}
