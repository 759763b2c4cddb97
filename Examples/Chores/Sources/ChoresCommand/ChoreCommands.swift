import ArgumentParser
import Chores
import CommandLineSupport
import EventualKit

struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Add a chore to your household (--in one of several; with none, to your own list).",
                                                    discussion: "Example: chores add \"Take out the bins\" --assign bob --due 2026-05-01")
    @OptionGroup var global: Options
    @Argument(help: "What is to be done.") var title: String
    @Option(help: "Who is to do it (a username).") var assign: String?
    @Option(help: "The day it is due: YYYY-MM-DD, today, tomorrow, +3d or +2w.") var due: String?
    @Option(name: .customLong("in"), help: "The household.") var household: String?

    func run() async throws {
        let user = try await ChoresCommand.open(global, network: true)
        let chore = try await user.add(title, assignee: assign, due: due, household: household)
        try await user.report("Added \(chore.shortID) \(chore.title)")
    }
}

struct Tick: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mark a chore done (--undo opens it again).", discussion: "Example: chores tick 1a2b3c4d")
    @OptionGroup var global: Options
    @Argument(help: "The chore's ID, as chores list shows it.") var id: String
    @Flag(help: "Open it again.") var undo = false

    func run() async throws {
        let user = try await ChoresCommand.open(global, network: true)
        let (chore, changed) = try await user.tick(id, done: !undo)
        guard changed else { return Terminal.say(undo ? "\(chore.title) is not done: nothing to open again." : "\(chore.title) is done already.") }
        try await user.report((undo ? "Opened again: " : "Done: ") + chore.title)
    }
}

struct Assign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Give a chore to someone.", discussion: "Example: chores assign 1a2b3c4d bob")
    @OptionGroup var global: Options
    @Argument(help: "The chore's ID, as chores list shows it.") var id: String
    @Argument(help: "Their username.") var user: String

    func run() async throws {
        let chores = try await ChoresCommand.open(global, network: true)
        try await chores.report("\(try await chores.assign(id, to: user).title) is \(user)'s")
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Your chores and your households', open first, the soonest due first.")
    @OptionGroup var global: Options
    @OptionGroup var output: OutputOptions

    /// A chore in `--json`, with the keys docs/json.md names.
    struct Shape: Encodable {
        let id, shortId, title: String
        @JSONNullable var assignee: String?
        @JSONNullable var due: String?
        let done: Bool
        @JSONNullable var space: String?
        @JSONNullable var spaceId: String?
        @JSONNullable var changedBy: String?
        let syncState: SyncStateJSON
    }

    func run() async throws {
        let user = try await ChoresCommand.open(global, network: true)
        let rows = try user.list(), names = Dictionary(try user.device.spaces.list().map { ($0.id, $0.name) }) { first, _ in first }
        if output.json {
            return print(try Terminal.json(rows.map { chore, state in
                Shape(id: chore.id, shortId: chore.shortID, title: chore.title, assignee: chore.assignee, due: chore.due, done: chore.done,
                      space: chore.space.flatMap { names[$0] }, spaceId: chore.space, changedBy: chore.changedBy, syncState: SyncStateJSON(state))
            }))
        }
        var table = Table("", "ID", "CHORE", "WHO", "DUE", "LIST")
        for (chore, state) in rows {
            table.add(SyncMark(state).rawValue, chore.shortID, (chore.done ? "✓ " : "") + chore.title, chore.assignee ?? "anyone",
                      chore.due ?? "-", chore.space.flatMap { names[$0] } ?? "yours")
        }
        print(rows.isEmpty ? "No chores yet: chores add TITLE" : table.render())
        if let legend = SyncMark.legend(rows.map { SyncMark($0.state) }, failures: "chores failures") { print(legend) }
    }
}
