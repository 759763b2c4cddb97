import CommandLineSupport
import ArgumentParser
import EventualAPI
import EventualKit
import Foundation
import Pantry

struct HouseholdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "household",
        abstract: "Share the pantry with the people you live with: list (the default), create, invite, invitations, accept, decline, members, role, leave, remove, use.",
        discussion: """
            Every change to a household works offline: it is queued and reaches the server at the next sync.
            Example: pantry household create Home, then pantry household invite bob --role editor
            """,
        subcommands: [HouseholdList.self, HouseholdCreate.self, HouseholdInvite.self] + PantryCommand.invitationCommands
            + [HouseholdMembers.self, HouseholdRole.self, HouseholdLeave.self, HouseholdRemove.self, HouseholdUse.self],
        defaultSubcommand: HouseholdList.self)
    @OptionGroup var global: GlobalOptions
}

/// A role a person is invited with (an owner is never invited: the space is handed over).
enum InvitedRole: String, ExpressibleByArgument, CaseIterable {
    case editor, viewer

    var role: SpaceRole { self == .editor ? .editor : .viewer }
}

/// A household's name as an argument: one a person can mean.
private func checkedName(_ name: String?, _ what: String) throws {
    if let name, name.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("\(what) needs a household's name, as `pantry household list` shows them") }
}

struct HouseholdList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "The households you are in, and where new items go.",
                                                    discussion: "Example: pantry household list --json")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let pantry = try await global.app().open()
        let households = try pantry.household.list()
        let current = try pantry.household.current()
        if output.json {
            struct Shape: Encodable { let id, name, role: String; @JSONNullable var owner: String?; let isDefault: Bool }
            print(try ItemPrinting.json(households.map {
                Shape(id: $0.id, name: $0.name, role: $0.role.rawValue, owner: $0.owner, isDefault: $0.id == current?.id)
            }))
            return
        }
        guard !households.isEmpty else {
            Terminal.say("You are in no household yet: create one with pantry household create NAME, or see pantry household invitations.")
            return
        }
        var table = Table("NAME", "YOU ARE", "OWNER", "ID")
        table.whole = ["ID"]
        for household in households {
            let owner = household.role == .owner ? "you" : household.owner ?? "-"
            table.add(household.name + (household.id == current?.id ? " *" : ""), household.role.rawValue, owner,
                      String(household.id.suffix(8)))
        }
        print(table.render())
        Terminal.say(current.map { "* New items go to \($0.name) (pantry household use --personal keeps them yours)." }
                     ?? "New items are yours alone; pantry household use NAME puts them in a household.")
    }
}

struct HouseholdCreate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "create", abstract: "Start a household that you own.",
                                                    discussion: "Example: pantry household create Home")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Its name, 1 to 60 characters, e.g. Home.") var name: String

    func run() async throws {
        let pantry = try await global.app().open()
        let household = try await pantry.household.create(name)
        try await Delivery.send(pantry.device, words: .pantry, done: "Created the household \(household.name): invite someone with pantry household invite USER",
                                queued: "Created the household \(household.name); its items can be added now")
    }
}

struct HouseholdInvite: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invite", abstract: "Invite someone, by username or email, to a household you own.",
        discussion: "An invitation by email never tells you whether that email has an account.\nExample: pantry household invite bob --role viewer --to Home")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Their username or email.") var user: String
    @Option(help: "editor (adds and uses items, the default) or viewer (only looks).") var role: InvitedRole = .editor
    @Option(help: "The household (default: the one you use, or your only one).") var to: String?

    func validate() throws {
        if user.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("Say who: a username or an email") }
        try checkedName(to, "--to")
    }

    func run() async throws {
        let pantry = try await global.app().open()
        let who = user.trimmingCharacters(in: .whitespaces)
        let household = try await naming("--to") { try await pantry.household.invite(who, as: role.role, to: to) }
        try await Delivery.send(pantry.device, words: .pantry, done: "Invited \(who) to \(household.name) as \(role.rawValue)",
                                queued: "Invitation of \(who) to \(household.name) as \(role.rawValue)", dropsRefusal: true)
    }
}

struct HouseholdMembers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "members", abstract: "Who is in a household, and as what.",
                                                    discussion: "Example: pantry household members Home --json")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The household (default: the one you use, or your only one).") var name: String?
    @OptionGroup var output: OutputOptions

    func validate() throws { try checkedName(name, "NAME") }

    func run() async throws {
        let pantry = try await global.app().open()
        let details = try await pantry.household.members(of: name)
        let household = details.value
        if output.json {
            struct Member: Encodable { let username, role, since: String }
            struct Shape: Encodable {
                let space, spaceId, role, owner: String
                let members: [Member]
                let savedCopy: Bool
                let fetchedAt: String
            }
            print(try ItemPrinting.json(Shape(
                space: household.name, spaceId: household.id, role: household.role.rawValue, owner: household.owner,
                members: household.members.map { Member(username: $0.username, role: $0.role.rawValue, since: Timestamp.iso8601($0.since)) },
                savedCopy: details.source == .cache, fetchedAt: Timestamp.iso8601(details.fetchedAt))))
            return
        }
        Delivery.sayIfSaved(details)
        Terminal.say("\(household.name), owned by \(household.owner == pantry.session.username ? "you" : household.owner); you are \(household.role.rawValue).")
        var table = Table("MEMBER", "ROLE", "SINCE")
        for member in household.members {
            table.add(member.username + (member.username == pantry.session.username ? " (you)" : ""), member.role.rawValue,
                      ItemPrinting.isoDay(UnixMillis.milliseconds(member.since)))
        }
        print(table.render())
    }
}

extension SpaceRole: ExpressibleByArgument {}

struct HouseholdRole: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "role", abstract: "Make a member of a household you own an editor or a viewer, or hand it over (owner).",
        discussion: "Handing over makes you an editor; then you can leave.\nExample: pantry household role bob owner --in Home")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The member's username, as pantry household members shows it.") var user: String
    @Argument(help: "owner, editor or viewer.") var role: SpaceRole
    @Option(name: .customLong("in"), help: "The household (default: the one you use, or your only one).") var household: String?

    func validate() throws {
        if user.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("Say who: a member's username") }
        try checkedName(household, "--in")
    }

    func run() async throws {
        let pantry = try await global.app().open()
        let who = user.trimmingCharacters(in: .whitespaces)
        let space = try await naming("--in") { try await pantry.household.setRole(role, of: who, in: household) }
        let done = role == .owner ? "Handed \(space.name) over to \(who); you are an editor of it now" : "Made \(who) \(role.rawValue) of \(space.name)"
        try await Delivery.send(pantry.device, words: .pantry, done: done, queued: "Making \(who) \(role.rawValue) of \(space.name)")
    }
}

struct HouseholdLeave: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "leave", abstract: "Leave a household: its items leave this device; yours stay.",
        discussion: "An owner hands the household over before leaving it while others are in it.\nExample: pantry household leave Home")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The household (default: the one you use, or your only one).") var name: String?

    func validate() throws { try checkedName(name, "NAME") }

    func run() async throws {
        let pantry = try await global.app().open()
        let household = try await pantry.household.leave(name)
        try await Delivery.send(pantry.device, words: .pantry, done: "Left \(household.name): its items are no longer on this device; yours are untouched",
                                queued: "Leaving \(household.name)", pull: true)
    }
}

struct HouseholdRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Take someone out of a household you own: its items leave their devices.",
        discussion: "Example: pantry household remove bob --from Home")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The member's username, as pantry household members shows it.") var user: String
    @Option(help: "The household (default: the one you use, or your only one).") var from: String?

    func validate() throws {
        if user.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("Say who: a member's username") }
        try checkedName(from, "--from")
    }

    func run() async throws {
        let pantry = try await global.app().open()
        let who = user.trimmingCharacters(in: .whitespaces)
        let household = try await naming("--from") { try await pantry.household.remove(who, from: from) }
        try await Delivery.send(pantry.device, words: .pantry, done: "Removed \(who) from \(household.name)", queued: "Removal of \(who) from \(household.name)")
    }
}

struct HouseholdUse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "use", abstract: "Choose where new items go from now on: a household, or yours alone (--personal).",
        discussion: "Kept for you on this device; pantry add and scan take --household NAME for one item.\nExample: pantry household use Home")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The household new items go to.") var name: String?
    @Flag(help: "New items are yours alone.") var personal = false

    func validate() throws {
        if (name == nil) == !personal { throw ValidationError("Give a household's name or --personal (one of them)") }
        try checkedName(name, "NAME")
    }

    func run() async throws {
        let pantry = try await global.app().open()
        let household = try await pantry.household.use(personal ? nil : name)
        Terminal.say(household.map { "New items go to \($0.name) from now on." } ?? "New items are yours alone from now on.")
    }
}

/// `--household NAME` of the commands that put an item in the pantry.
struct DestinationOptions: ParsableArguments {
    @Option(help: "Put it in this household (default: the one chosen with pantry household use, else yours).") var household: String?

    func validate() throws { try checkedName(household, "--household") }

    /// The household the item goes to; nil for the person's own items.
    func space(in pantry: UserPantry) throws -> Space? {
        let (space, lost) = try pantry.household.destination(household)
        if lost != nil {
            Terminal.error("You are no longer in the household new items went to: this one is yours (pantry household use NAME chooses another).")
        }
        return space
    }

    /// " to Home" for a household's item, nothing for the person's own.
    static func to(_ space: Space?) -> String { space.map { " to \($0.name)" } ?? "" }
}

/// What a command says of a membership change it queued: sent now if the server answers within
/// its answer timeout (a person waits to see an invitation or a join taken; offline, the refused
/// connection answers at once), else queued, and why.
/// Runs a household command's `body`, naming its option (`--to`) when the person is in several
/// households, said none, and chose none with `pantry household use`.
func naming<T>(_ option: String, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch PantryError.whichHousehold(let count) where count > 1 {
        throw CLIError("You are in \(count) households: say which with \(option) NAME, or choose one once with pantry household use NAME")
    }
}
