import CommandLineSupport
import ArgumentParser
import EventualAPI
import EventualKit
import Foundation
import Spending

struct AccountsShare: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Share an account and its transactions with someone: they see and record them once they accept.")
    enum Role: String, ExpressibleByArgument, CaseIterable { case editor, viewer }
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The account's name (or its 8-character id).") var account: String
    @Option(name: .customLong("with"), help: ArgumentHelp("Their username or email.", valueName: "user")) var person: String
    @Option(help: "editor (records too) or viewer (reads only).") var role: Role = .editor

    func run() async throws {
        let spending = try await global.spending()
        let shared = try await spending.sharing.share(account, with: person, role: role == .viewer ? .viewer : .editor)
        let with = (shared.share.with.isEmpty ? shared.share.invited : shared.share.with).joined(separator: ", ")
        if shared.invitedAgain {
            Terminal.say("Invited \(with) again to \(shared.share.spaceName) (an earlier invitation is replaced): they see \(shared.account.name) "
                         + "once they accept.")
        } else if shared.already {
            Terminal.say("\(shared.account.name) is shared with \(with) already (space \(shared.share.spaceName)).")
        } else {
            let space = shared.share.spaceName
            let when = shared.memberAlready ? "\(with) is already in \(space): they see it at their next sync."
                : "They see it once they accept: spendiq invitations, then spendiq accept ID."
            Terminal.say("Shared \(shared.account.name) and \(shared.movedTransactions) transaction(s) with \(with) as \(role.rawValue) "
                         + "(space \(space)). " + when)
        }
        await finish(spending)
    }
}

struct AccountsUnshare: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unshare",
        abstract: "Take a shared account back: it and its transactions are yours alone again, and leave the others' devices.",
        discussion: "Example: spendiq accounts unshare Bank")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The account's name (or its 8-character id).") var account: String

    func run() async throws {
        let spending = try await global.spending()
        let unshared = try await spending.sharing.unshare(account)
        let with = unshared.with.isEmpty ? "" : " " + unshared.with.joined(separator: ", ") + " no longer see" + (unshared.with.count == 1 ? "s" : "") + " it."
        Terminal.say("\(unshared.account.name) and \(unshared.transactions) transaction(s) are yours alone again.\(with)")
        await finish(spending)
    }
}

struct AccountsMembers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "members", abstract: "Who shares an account, and as what.", discussion: "Example: spendiq accounts members Bank --json")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The shared account's name (or its 8-character id).") var account: String
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let spending = try await global.spending()
        let details = try await spending.sharing.members(of: account)
        let space = details.value
        if output.json {
            struct Member: Encodable { let username, role, since: String }
            struct Shape: Encodable { let space, spaceId, role, owner: String; let members: [Member]; let savedCopy: Bool; let fetchedAt: String }
            print(try Terminal.json(Shape(space: space.name, spaceId: space.id, role: space.role.rawValue, owner: space.owner,
                                          members: space.members.map { Member(username: $0.username, role: $0.role.rawValue, since: Timestamp.iso8601($0.since)) },
                                          savedCopy: details.source == .cache, fetchedAt: Timestamp.iso8601(details.fetchedAt))))
            return
        }
        if details.source == .cache {
            print(Terminal.paint(Terminal.wrap("Offline: who shares it as of \(TimeAgo.phrase(details.fetchedAt, now: UnixMillis.now()))."), .yellow))
        }
        let me = spending.session.username
        Terminal.say("\(space.name), owned by \(space.owner == me ? "you" : space.owner); you are \(space.role.rawValue).")
        var table = Table("MEMBER", "ROLE", "SINCE")
        table.whole = ["ROLE", "SINCE"]
        for member in space.members {
            table.add(member.username + (member.username == me ? " (you)" : ""), member.role.rawValue, Timestamp.iso8601(member.since).prefix(10).description)
        }
        print(table.render())
    }
}

struct AccountsRole: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "role", abstract: "Make someone who shares an account you own an editor or a viewer, or hand it over (owner).",
        discussion: "Handing over makes you an editor; then you can leave.\nExample: spendiq accounts role Bank dan viewer")
    enum Role: String, ExpressibleByArgument, CaseIterable { case owner, editor, viewer }
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The shared account's name (or its 8-character id).") var account: String
    @Argument(help: "Their username, as spendiq accounts members shows it.") var user: String
    @Argument(help: "owner, editor or viewer.") var role: Role

    func run() async throws {
        let spending = try await global.spending()
        let role: SpaceRole = switch self.role { case .owner: .owner; case .editor: .editor; case .viewer: .viewer }
        let space = try await spending.sharing.setRole(role, of: user, on: account)
        Terminal.say(role == .owner ? "Handing \(space.name) over to \(user): you are an editor of it once the server hears it."
                                    : "\(user) is \(role == .viewer ? "a viewer" : "an editor") of \(space.name) once the server hears it.")
        await finish(spending)
    }
}

struct AccountsRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Stop sharing an account you own with someone: its space's accounts leave their devices.",
        discussion: "Example: spendiq accounts remove Bank dan")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The shared account's name (or its 8-character id).") var account: String
    @Argument(help: "Their username, as spendiq accounts members shows it.") var user: String

    func run() async throws {
        let spending = try await global.spending()
        let space = try await spending.sharing.remove(user, from: account)
        Terminal.say("Removing \(user) from \(space.name): its accounts leave their devices at their next sync.")
        await finish(spending)
    }
}

struct AccountsLeave: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "leave", abstract: "Stop seeing an account someone shares with you: its space's accounts leave this device.",
        discussion: "Example: spendiq accounts leave \"Joint\"")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The shared account's name (or its 8-character id).") var account: String

    func run() async throws {
        let spending = try await global.spending()
        let (space, accounts) = try await spending.sharing.leave(account)
        await spending.device.sync(.localBudget)
        let gone = try spending.ledger.accounts(includeArchived: true).allSatisfy { $0.space != space.id }
        Terminal.say(gone ? "Left \(space.name): \(accounts.joined(separator: ", ")) \(accounts.count == 1 ? "is" : "are") no longer on this device."
                          : "Leaving \(space.name): \(accounts.joined(separator: ", ")) leave\(accounts.count == 1 ? "s" : "") this device once the server hears it.")
    }
}

/// Says each share whose invitation the server refused, moved back to the person's own accounts;
/// returns how many (their moves back wait to be sent).
@discardableResult
func sayUndoneShares(_ spending: UserSpending) async -> Int {
    guard let undone = try? await spending.sharing.undoRefusedShares() else { return 0 }
    for share in undone {
        let reason = share.reason.hasSuffix(".") ? String(share.reason.dropLast()) : share.reason
        let what = !share.stillInvited.isEmpty ? "the share with \(share.stillInvited.joined(separator: ", ")) stays as it was"
            : share.accounts.isEmpty ? "nothing was shared"
            : "\(share.accounts.joined(separator: ", ")) and \(share.transactions) transaction(s) are yours alone again"
        print(Terminal.paint(Terminal.wrap("\(share.invitee) could not be invited (\(reason)): \(what)."), .yellow))
    }
    return undone.count
}

