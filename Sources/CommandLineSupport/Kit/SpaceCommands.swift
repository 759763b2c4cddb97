import ArgumentParser
import EventualAPI
import EventualKit
import Foundation

// The invitations to an app's spaces (a pantry's household, SpendiQ's shared accounts), written
// once: the list that waits for the person's answer, and the answer. An app lists them where its
// spaces live (`pantry household invitations`, `spendiq invitations`).

/// `invitations`: the invitations that wait for the person's answer.
public struct Invitations<App: AppCommand>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "invitations", abstract: "The invitations to a \(App.User.deviceApp.spaceNoun) that wait for your answer.",
                             discussion: "Example: \(App.spaceCommand) invitations, then \(App.spaceCommand) accept ID")
    }

    @OptionGroup var global: SharedOptions<App>
    @OptionGroup var output: OutputOptions

    public init() {}

    public func run() async throws {
        let user = try await App.open(global, network: false)
        let cached: Cached<SpaceInvitations>
        do {
            cached = try await user.device.spaces.invitations()
        } catch CacheError.needsConnectionForFirstLoad(_, let reason) {
            throw CLIError("Connect to see the invitations waiting for you (\(reason)): this device has never fetched them")
        }
        let waiting = cached.value.waiting.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        if output.json {
            print(try Terminal.json(InvitationsJSON(cached, waiting)))
            return
        }
        Delivery.sayIfSaved(cached)
        guard !waiting.isEmpty else {
            // NB: with its email not confirmed, invitations to it may wait: "none" would not be true.
            if cached.value.awaitingEmailVerification {
                Terminal.say("Confirm your email to see invitations sent to it: \(App.words.command) verify --resend.")
            } else {
                print("No invitation waits for you.")
            }
            return
        }
        var table = Table("ID", App.User.deviceApp.spaceNoun.uppercased(), "FROM", "AS", "SENT")
        table.whole = ["ID", "AS"]
        table.cutFirst = [App.User.deviceApp.spaceNoun.uppercased()]
        let now = UnixMillis.now()
        for invitation in waiting {
            table.add(String(invitation.id.suffix(OutboxEntry.shortIDLength)), invitation.spaceName, invitation.invitedBy, invitation.role.rawValue,
                      TimeAgo.phrase(UnixMillis.milliseconds(invitation.createdAt), now: now))
        }
        print(table.render())
        Terminal.say("Answer with \(App.spaceCommand) accept ID or \(App.spaceCommand) decline ID.")
        // NB: under the list, not above it: those shown were sent to the username, and more may wait.
        if cached.value.awaitingEmailVerification {
            Terminal.say("More may be sent to your email: confirm it to see them, \(App.words.command) verify --resend.")
        }
    }
}

/// `accept`: joins the space an invitation is to.
public struct Accept<App: AppCommand>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "accept", abstract: "Join the \(App.User.deviceApp.spaceNoun) an invitation is to: its \(App.words.record)s "
                                + "arrive now when the server answers, else with the next sync.",
                             discussion: "Example: \(App.spaceCommand) accept 4f1c9a2e (the ID \(App.spaceCommand) invitations shows)")
    }

    @OptionGroup var global: SharedOptions<App>
    @Argument(help: "The invitation's ID, as the invitations show it (8 characters), or its whole id.") var id: String

    public init() {}

    public func run() async throws {
        let user = try await App.open(global, network: false)
        let invitation = try await answering(App.self) { try await user.device.spaces.accept(id) }
        let name = invitation.map { "\($0.spaceName) (\($0.invitedBy)'s invitation, as \($0.role.rawValue))" } ?? "the \(App.User.deviceApp.spaceNoun)"
        try await Delivery.send(user.device, words: App.words, done: "Joined \(name): \(App.joined)",
                                queued: "Acceptance of the invitation to \(name)", pull: true)
    }
}

/// `decline`: says no to an invitation.
public struct Decline<App: AppCommand>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "decline", abstract: "Say no to an invitation.",
                             discussion: "Example: \(App.spaceCommand) decline 4f1c9a2e")
    }

    @OptionGroup var global: SharedOptions<App>
    @Argument(help: "The invitation's ID, as the invitations show it (8 characters), or its whole id.") var id: String

    public init() {}

    public func run() async throws {
        let user = try await App.open(global, network: false)
        let invitation = try await answering(App.self) { try await user.device.spaces.decline(id) }
        let name = invitation?.spaceName ?? "the \(App.User.deviceApp.spaceNoun)"
        try await Delivery.send(user.device, words: App.words, done: "Declined the invitation to \(name)",
                                queued: "Refusal of the invitation to \(name)")
    }
}

/// Runs an answer to an invitation, saying which to type when the id picks none.
private func answering<App: AppCommand>(_: App.Type, _ body: () async throws -> SpaceInvitation?) async throws -> SpaceInvitation? {
    do {
        return try await body()
    } catch SpaceError.invitationReferenceTooShort(let typed) {
        throw ValidationError(SpaceError.invitationReferenceTooShort(typed).description)
    } catch SpaceError.noInvitation(let typed) {
        throw CLIError("\(SpaceError.noInvitation(typed)): \(App.spaceCommand) invitations lists them")
    }
}

/// `invitations --json`: an answer of the server's, so `savedCopy` and `fetchedAt` beside the list.
struct InvitationsJSON: Encodable {
    struct Line: Encodable { let id, space, spaceId, invitedBy, role, createdAt: String }
    let savedCopy: Bool
    let fetchedAt: String
    let invitations: [Line]
    let awaitingEmailVerification: Bool

    init(_ cached: Cached<SpaceInvitations>, _ waiting: [SpaceInvitation]) {
        savedCopy = cached.source == .cache
        fetchedAt = Timestamp.iso8601(cached.fetchedAt)
        invitations = waiting.map {
            Line(id: $0.id, space: $0.spaceName, spaceId: $0.spaceID, invitedBy: $0.invitedBy, role: $0.role.rawValue,
                 createdAt: Timestamp.iso8601($0.createdAt))
        }
        awaitingEmailVerification = cached.value.awaitingEmailVerification
    }
}

/// A change of a space's membership (a household made, an invitation sent or answered), sent at
/// once when the server answers, and said either way.
public enum Delivery {
    /// `done` when the server took it now; `queued` and the reason it waits otherwise; a refusal
    /// is an error. A silent server costs the local budget, not the wait for an answer.
    /// `dropsRefusal`: a refusal said now is dropped from the outbox too (an invitation of no one
    /// changed nothing here), so that no later sync fails for what the person was already told.
    public static func send(_ device: SignedInDevice, words: DeviceWords, done: String, queued: String, pull: Bool = false,
                            dropsRefusal: Bool = false) async throws {
        let failedBefore = try device.outbox.counts().failed
        // NB: a join or a leave pulls too, so that the space's records arrive, or leave, now.
        let report = await device.sync(.serverAnswer, pull: pull)
        let counts = try device.outbox.counts()
        if counts.failed > failedBefore, let refused = try device.outbox.entries(state: .failed).last {
            let reason = refused.lastError ?? "no reason given"
            let said = reason.hasSuffix(".") ? String(reason.dropLast()) : reason
            if dropsRefusal, refused.kind == .call {
                try await device.outbox.discard(refused.id)
                throw CLIError("The server refused it: \(said); nothing was sent, and nothing of it waits on this device")
            }
            // NB: a refused call stays in the outbox (sign-out minds it): say how to drop it.
            throw CLIError("The server refused it: \(said) (\(words.command) discard \(refused.shortID) drops it)")
        }
        guard report.finished, report.failure == nil, counts.pending == 0 else {
            let why = switch report.failure {
            case _ where !report.finished: "the server has not answered yet"
            case .unreachable? where device.connectivity.foundSilent: "the server is not answering"
            case .unreachable?: "offline now"
            case .unauthorized?: "the server wants you to sign in again: \(words.command) login"
            case .deviceStorage?: "this device's storage is full: free some space"
            case .upgradeRequired?: "this version of the app no longer syncs: update it"
            case nil: "other changes are still being sent"
            default: "the server has not answered yet"
            }
            Terminal.say("\(queued): queued; it reaches the server at the next sync (\(why)).")
            return
        }
        Terminal.say(done + ".")
    }

    /// Says that what follows is the saved copy, and how old it is, when it is.
    public static func sayIfSaved(_ cached: Cached<some Sendable>) {
        guard cached.source == .cache else { return }
        Terminal.say(Terminal.paint("Offline: showing the saved copy from \(TimeAgo.phrase(cached.fetchedAt, now: UnixMillis.now())).", .yellow))
    }
}
