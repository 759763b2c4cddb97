import ArgumentParser
import Chores
import CommandLineSupport
import EventualKit

/// `chores`: a household's shared chore list. The account and outbox subcommands are the kit's.
struct ChoresCommand: AppCommand {
    typealias User = UserChores
    static let configuration = CommandConfiguration(
        commandName: "chores", abstract: "A household's shared chore list. Works offline: what you do is sent when the server answers.",
        subcommands: accountCommands + [Add.self, Tick.self, Assign.self, List.self, Household.self] + invitationCommands + outboxCommands)
    static let words = DeviceWords(command: "chores", entries: "changes", one: "change(s)", many: "change(s)", record: "chore")
    @OptionGroup var global: Options

    static func app(_ options: Options, creating: Bool) throws -> ChoresApp {
        ChoresApp(configuration: try options.configuration(creating: creating, ChoresConfiguration.init))
    }

    static func summary(of change: FailedChange, _ user: UserChores) -> String { Chore.name(change.recordID, user.device.store) }
}

typealias Options = SharedOptions<ChoresCommand>

extension UserChores {
    /// Sends what waits for as long as `wait` allows, then says `what` was done, and that it waits here if it does.
    func report(_ what: String, _ wait: SyncWait = .localBudget, pull: Bool = false) async throws {
        await device.sync(wait, pull: pull)
        let waits = try device.outbox.counts().pending > 0
        Terminal.say(what + (waits ? ": saved here, sent when the server answers (chores sync)." : "."))
    }
}

/// `chores`' words for the model's errors, and which are a value typed wrong (status 64).
struct Hints: CommandHints {
    func message(for error: ChoresError) -> String? {
        guard case .whichHousehold(let count) = error else { return nil }
        return count == 0 ? "\(error): create one with chores household create NAME" : "\(error) with --in NAME"
    }

    func isMalformedArgument(_ error: ChoresError) -> Bool {
        switch error {
        case .badText, .controlCharacter, .badDue, .badID: true
        default: false
        }
    }
}

await runParsed(ChoresCommand.self, arguments: Array(CommandLine.arguments.dropFirst()), hints: Hints())
