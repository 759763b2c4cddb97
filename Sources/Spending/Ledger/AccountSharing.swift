import EventualAPI
import EventualKit
import Foundation
import GRDB

/// How an account is shared, as this device knows it.
public struct AccountShare: Sendable, Equatable {
    public let spaceID: String
    public let spaceName: String
    /// The person's role in the space.
    public let role: SpaceRole
    /// Who else sees it: the space's other members as the server last said, the owner first
    /// (the same on every member's device); before it has said, whom this device invited.
    public let with: [String]
    /// The role the others have in it, as the server last said (the same on each of the owner's
    /// devices); before it has said, the role this device invited them as; nil when someone else shared it.
    public let invitedAs: SpaceRole?
    /// Whom this device invited and is not in it yet (as the server last said): their invitation
    /// waits, or they declined it.
    public var invited: [String] = []
}

/// What `share` did.
public struct SharedAccount: Sendable, Equatable {
    public let account: SpendingAccount
    public let share: AccountShare
    /// True when the account was shared with them already: nothing was queued.
    public let already: Bool
    /// How many of its transactions moved with it.
    public let movedTransactions: Int
    /// True when they are in the space already (they accepted an earlier share), as the server
    /// last said: no invitation is made, and the account reaches them with their next sync. Not
    /// asked when `already`.
    public let memberAlready: Bool
    /// True when the account was shared with them already and they are not in its space (their
    /// invitation waits, they declined it, or were removed): they are invited again.
    public var invitedAgain = false
}

/// Sharing accounts with another person: an account and its transactions move to a space the two
/// share, so both see and record them. Works offline: the space, the invitation and the move are
/// queued, and go to the server in that order.
public struct AccountSharing: Sendable {
    let ledger: Ledger
    let spaces: Spaces
    /// The signed-in person's username.
    let username: String
    /// Tries to send what waits now (at most the local budget): a new share's invitation is heard
    /// before anything moves, when the server answers.
    var send: @Sendable () async -> Void = {}

    var store: LocalStore { ledger.store }

    /// Puts `reference` and its transactions (transfers to it too) in a space shared with `person`
    /// (a username or an email) as `role`: the space this person already made for them with that
    /// role, else a new one, to which they are invited. They see it once they accept, or at their
    /// next sync when they are in that space already. A new space's invitation is sent first: one
    /// the server refuses (no one of that name) moves nothing; offline, the move is queued after
    /// it, and `undoRefusedShares` moves it back if the server refuses it later.
    public func share(_ reference: String, with person: String, role: SpaceRole = .editor) async throws -> SharedAccount {
        let person = try Self.checkedPerson(person)
        guard person.lowercased() != username.lowercased() else { throw SpendingError.invalidField("The account is yours already: share it with someone else") }
        guard role != .owner else { throw SpendingError.invalidField("An account is shared with an editor or a viewer") }
        let account = try ledger.account(reference)
        if let current = account.space {
            let share = try shares()[current]
            let named = { (people: [String]) in people.contains { $0.lowercased() == person.lowercased() } }
            if let share, named(share.with), await isMember(person, of: current) {
                return SharedAccount(account: account, share: share, already: true, movedTransactions: 0, memberAlready: false)
            }
            // NB: someone invited who declined, or was removed since: invited again (a pending invitation is replaced).
            if let share, share.role == .owner, named(share.with + share.invited) || share.with.isEmpty {
                try await spaces.invite(person, to: current, role: share.invitedAs ?? role)
                await send()
                // NB: refused now (no one of that name): said at once, and nothing of it stays; the
                // account stays shared as it was with whoever else is invited (a refusal of a typo
                // once took it back from them: issue 46's second week).
                if let refusal = try spaces.refusedInvitations().first(where: { $0.spaceID == current && $0.invitee == person }) {
                    try await store.write { [spaces] tx in try spaces.drop(refusal, in: tx) }
                    throw SpendingError.inviteeRefused(person, reason: refusal.reason)
                }
                let invited = AccountShare(spaceID: share.spaceID, spaceName: share.spaceName, role: share.role, with: [person],
                                           invitedAs: share.invitedAs ?? role)
                // NB: "again" only of someone invited before: a first invitation into the space replaces nothing.
                return SharedAccount(account: account, share: invited, already: false, movedTransactions: 0, memberAlready: false,
                                     invitedAgain: named(share.with + share.invited))
            }
            throw SpendingError.alreadyShared(account.name, with: (share?.with ?? []) + (share?.invited ?? []))
        }
        let spaceID: String
        var memberAlready = false
        if let reused = try reusableSpace(with: person, role: role) {
            spaceID = reused
            memberAlready = await isMember(person, of: reused)
            // NB: someone removed from it, or who left it, is invited again (a pending invitation is replaced).
            if !memberAlready { try await spaces.invite(person, to: reused, role: role) }
        } else {
            // NB: the space, then the invitation, then the move: the outbox sends them in this
            // order, so the space exists on the server before the first record put in it.
            // NB: "alice & bob" and "alice & bob, read-only": two people may share in both ways.
            let suffix = role == .viewer ? ", read-only" : ""
            // NB: kept once the invitation is queued: a share cut short after this reuses the space.
            spaceID = try await store.write { [spaces, username, now = ledger.now] tx in
                let id = try spaces.create(name: String("\(username) & \(person)".prefix(60 - suffix.count)) + suffix, in: tx)
                try spaces.invite(person, toSpaceID: id, role: role, in: tx)
                try tx.db.execute(sql: "INSERT INTO spending_shares (space_id, invitee, role, sharedAt) VALUES (?, ?, ?, ?)",
                                  arguments: [id, person, role.rawValue, now])
                return id
            }
            await send()
            if let refusal = try spaces.refusedInvitations().first(where: { $0.spaceID == spaceID }) {
                _ = try await undo(refusal)
                throw SpendingError.inviteeRefused(person, reason: refusal.reason)
            }
        }
        let moved = try await store.write { tx in try Self.carry(account.id, to: spaceID, in: tx) }
        let share = try shares()[spaceID] ?? AccountShare(spaceID: spaceID, spaceName: spaceID, role: .owner, with: [person], invitedAs: role)
        return SharedAccount(account: try ledger.account(account.id), share: share, already: false, movedTransactions: moved,
                             memberAlready: memberAlready)
    }

    /// Whether `person` (a username) is a member of `space`, as the server says now or said last;
    /// false when this device cannot tell (offline with no copy, or an email given).
    private func isMember(_ person: String, of space: String) async -> Bool {
        // NB: the server's answer first: a removal this device just sent is not in its last pull yet.
        let members = (try? await spaces.members(of: space).value.members) ?? (try? spaces.space(space).members) ?? []
        return members.contains { $0.username.lowercased() == person.lowercased() }
    }

    /// How each shared space of the person's accounts is shared, by space id.
    public func shares() throws -> [String: AccountShare] {
        let invitees = try store.reader.read { db in
            try Row.fetchAll(db, sql: "SELECT space_id, invitee, role FROM spending_shares ORDER BY sharedAt, invitee")
        }
        let offered = Dictionary(grouping: invitees, by: { $0["space_id"] as String })
        var shares: [String: AccountShare] = [:]
        for space in try spaces.list() where space.kind == .shared {
            let mine = offered[space.id] ?? []
            // NB: the server's members where it has said them, so that every member's device names the same people.
            let invitees = mine.map { $0["invitee"] as String }
            let members = space.others(than: username)
            // NB: before the server said who is in it (a share made offline), the invitee is whom it is shared with.
            let others = !space.members.isEmpty ? members : invitees.isEmpty ? (space.owner.map { $0 == username ? [] : [$0] } ?? []) : invitees
            let invited = space.members.isEmpty ? [] : invitees.filter { person in !members.contains { $0.caseInsensitiveCompare(person) == .orderedSame } }
            // NB: the role the others have, as the server said it, so that every device of the owner says the same;
            // before it has said, the role this device invited them as.
            let theirs = space.role == .owner ? space.members.first { $0.username.caseInsensitiveCompare(username) != .orderedSame }?.role : nil
            shares[space.id] = AccountShare(spaceID: space.id, spaceName: space.name, role: space.role, with: others,
                                            invitedAs: theirs ?? mine.first.flatMap { SpaceRole(rawValue: $0["role"] as String) }, invited: invited)
        }
        return shares
    }

    /// The space this device made to share accounts with `person` as `role`, if the person still owns it.
    private func reusableSpace(with person: String, role: SpaceRole) throws -> String? {
        let candidates = try store.reader.read { db in
            try String.fetchAll(db, sql: "SELECT space_id FROM spending_shares WHERE lower(invitee) = lower(?) AND role = ? ORDER BY sharedAt",
                                arguments: [person, role.rawValue])
        }
        let owned = Set(try spaces.list().filter { $0.kind == .shared && $0.role == .owner }.map(\.id))
        return candidates.first(where: owned.contains)
    }

    /// A username or an email: not empty, no control character, at most 254 characters.
    static func checkedPerson(_ text: String) throws(SpendingError) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw .invalidField("With whom? Give their username or email") }
        guard trimmed.count <= 254 else { throw .invalidField("A username or an email is at most 254 characters") }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == " " }) else {
            throw .invalidField("'\(trimmed.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : String($0) }.joined())' is not a username or an email")
        }
        return trimmed
    }
}
