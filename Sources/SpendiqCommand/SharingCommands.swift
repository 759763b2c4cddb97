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
        let with = shared.share.with.joined(separator: ", ")
        if shared.already {
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

struct Invitations: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Invitations to shared accounts that wait for your answer.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let spending = try await global.spending()
        let waiting = try await spending.sharing.invitations()
        let invitations = waiting.value.waiting.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        if output.json {
            struct Item: Encodable { let id, space, spaceId, invitedBy, role, createdAt: String }
            struct Shape: Encodable { let stale: Bool; let fetchedAt: String; let invitations: [Item]; let awaitingEmailVerification: Bool }
            print(try Terminal.json(Shape(stale: waiting.source == .cache, fetchedAt: Timestamp.iso8601(waiting.fetchedAt), invitations: invitations.map {
                Item(id: $0.id, space: $0.spaceName, spaceId: $0.spaceID, invitedBy: $0.invitedBy, role: $0.role.rawValue,
                     createdAt: Timestamp.iso8601($0.createdAt))
            }, awaitingEmailVerification: waiting.value.awaitingEmailVerification)))
            return
        }
        if waiting.source == .cache {
            print(Terminal.paint(Terminal.wrap("Offline: the invitations as of \(TimeAgo.phrase(waiting.fetchedAt, now: UnixMillis.now()))."), .yellow))
        }
        if waiting.value.awaitingEmailVerification {
            Terminal.say("Confirm your email to see invitations sent to it: spendiq verify --resend.")
        }
        guard !invitations.isEmpty else {
            // NB: with its email not confirmed, invitations to it may wait: "none" would not be true.
            if !waiting.value.awaitingEmailVerification { print("No invitations wait for you.") }
            return
        }
        var table = Table("ID", "FROM", "SPACE", "ROLE")
        table.whole = ["ID", "ROLE"]
        table.cutFirst = ["SPACE"]
        for invitation in invitations {
            table.add(String(invitation.id.suffix(8)), invitation.invitedBy, invitation.spaceName, invitation.role.rawValue)
        }
        print(table.render())
        Terminal.say("Answer with spendiq accept ID or spendiq decline ID.")
    }
}

struct Accept: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Accept an invitation: its shared accounts arrive with the next sync.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The invitation's id, as spendiq invitations shows it.") var id: String

    func run() async throws {
        let spending = try await global.spending()
        let invitation = try await spending.sharing.accept(id)
        let what = invitation.map { "\($0.invitedBy)'s invitation to \($0.spaceName) as \($0.role.rawValue)" } ?? "the invitation"
        await spending.trySync()
        let status = try await spending.status(probe: false)
        Terminal.say("Accepted \(what). " + (status.pending > 0 ? "It goes to the server with the next sync; the accounts follow."
                                                                  : "Its accounts are here: spendiq accounts"))
    }
}

struct Decline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Decline an invitation.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The invitation's id, as spendiq invitations shows it.") var id: String

    func run() async throws {
        let spending = try await global.spending()
        let invitation = try await spending.sharing.decline(id)
        Terminal.say("Declined " + (invitation.map { "\($0.invitedBy)'s invitation to \($0.spaceName)." } ?? "the invitation."))
        await finish(spending)
    }
}
