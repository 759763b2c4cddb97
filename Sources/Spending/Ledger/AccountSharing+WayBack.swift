import EventualAPI
import EventualKit
import Foundation
import GRDB

/// A share the server refused, moved back: its accounts are the person's own again.
public struct UndoneShare: Sendable, Equatable {
    /// Whom it was for, and the server's words.
    public let invitee: String
    public let reason: String
    /// The accounts that came back, by name, and how many transactions came with them.
    public let accounts: [String]
    public let transactions: Int
    /// The others invited to the same space: for them it stays as it was, and nothing came back.
    public var stillInvited: [String] = []
}

/// What `unshare` did.
public struct Unshared: Sendable, Equatable {
    public let account: SpendingAccount
    /// The space it left, by name.
    public let spaceName: String
    /// Whom it was shared with.
    public let with: [String]
    /// How many of its transactions came back with it.
    public let transactions: Int
}

/// The way back from a share: who is in it, their roles, taking someone out, leaving, taking
/// an account back, and undoing a share whose invitation the server refused. Every change is
/// queued (it works offline); a refusal the device can foresee is refused here, nothing queued.
extension AccountSharing {
    /// Takes `reference` back from the space it is shared in, with its side of every transaction:
    /// it is the person's own again, and leaves the other members' devices at their next sync.
    /// Its space's owner only; the space stays, for a later share with the same people.
    public func unshare(_ reference: String) async throws -> Unshared {
        let account = try ledger.account(reference)
        let space = try sharedSpace(of: account)
        guard space.role == .owner else { throw SpendingError.sharedWithYou(account.name, owner: space.owner) }
        let with = try shares()[space.id]?.with ?? []
        let moved = try await store.write { tx in try Self.carry(account.id, to: nil, in: tx) }
        return Unshared(account: try ledger.account(account.id), spaceName: space.name, with: with, transactions: moved)
    }

    /// The space `reference` is shared in, with its members: the server's, else the last copy.
    public func members(of reference: String) async throws -> Cached<SpaceDetails> {
        let space = try sharedSpace(of: try ledger.account(reference, allowArchived: true))
        do {
            return try await spaces.members(of: space.id)
        } catch let error as CacheError {
            guard case .needsConnectionForFirstLoad(_, let reason) = error else { throw error }
            throw SpendingError.unreachable("No connection, and this device has never fetched who shares \(space.name) (\(reason))")
        }
    }

    /// Gives `person` another role in the space `reference` is shared in (its owner only);
    /// `owner` hands it over, and the person becomes an editor.
    @discardableResult
    public func setRole(_ role: SpaceRole, of person: String, on reference: String) async throws -> Space {
        let person = try Self.checkedPerson(person)
        let space = try ownedSpace(of: reference)
        try await spaces.setRole(role, of: person, in: space.id)
        return space
    }

    /// Takes `person` out of the space `reference` is shared in (its owner only): its accounts
    /// leave their devices at their next sync.
    @discardableResult
    public func remove(_ person: String, from reference: String) async throws -> Space {
        let person = try Self.checkedPerson(person)
        guard person.caseInsensitiveCompare(username) != .orderedSame else {
            throw SpendingError.refused("To stop seeing it, leave it: spendiq accounts leave \(reference)")
        }
        let space = try ownedSpace(of: reference)
        try await spaces.remove(person, from: space.id)
        // NB: no longer someone this device shares with: a later share invites them again.
        try await store.write { tx in
            try tx.db.execute(sql: "DELETE FROM spending_shares WHERE space_id = ? AND lower(invitee) = lower(?)", arguments: [space.id, person])
        }
        return space
    }

    /// Leaves the space `reference` is shared in: its accounts leave this device once the server
    /// hears it. Its owner takes the account back (`unshare`) or hands the space over instead,
    /// while others are in it.
    @discardableResult
    public func leave(_ reference: String) async throws -> (space: Space, accounts: [String]) {
        let account = try ledger.account(reference, allowArchived: true)
        let space = try sharedSpace(of: account)
        let others = space.others(than: username)
        if space.role == .owner, !others.isEmpty {
            throw SpendingError.refused("You own \(space.name) and \(others.joined(separator: ", ")) \(others.count == 1 ? "is" : "are") in it: "
                                             + "take \(account.name) back with spendiq accounts unshare \(account.name), or hand it over first "
                                             + "with spendiq accounts role \(account.name) \(others[0]) owner")
        }
        let accounts = try ledger.accounts(includeArchived: true).filter { $0.space == space.id }.map(\.name)
        try await spaces.leave(space.id)
        return (space, accounts)
    }

    /// Moves back every share whose invitation the server refused (no one of that name, say) and
    /// no one else is in: its accounts and their transactions are the person's own again, the
    /// empty space is left (the server deletes it), and the refusal is dropped. Returns what came back.
    @discardableResult
    public func undoRefusedShares() async throws -> [UndoneShare] {
        let made = Set(try await store.reader.read { db in try String.fetchAll(db, sql: "SELECT space_id FROM spending_shares") })
        var undone: [UndoneShare] = []
        for refusal in try spaces.refusedInvitations() where made.contains(refusal.spaceID) {
            if let share = try await undo(refusal) { undone.append(share) }
        }
        return undone
    }

    /// Undoes one refused share (see `undoRefusedShares`); nil when someone else is in its space
    /// now (the refusal then waits for the person). When someone else is invited to it, only the
    /// refused invitation goes: the accounts stay shared with them.
    func undo(_ refusal: RefusedInvitation) async throws -> UndoneShare? {
        guard let space = try? spaces.space(refusal.spaceID), space.others(than: username).isEmpty else { return nil }
        let othersInvited = try await store.reader.read { db in
            try String.fetchAll(db, sql: "SELECT invitee FROM spending_shares WHERE space_id = ? AND lower(invitee) != lower(?)",
                                arguments: [space.id, refusal.invitee])
        }
        if !othersInvited.isEmpty {
            return try await store.write { [spaces] tx in
                try tx.db.execute(sql: "DELETE FROM spending_shares WHERE space_id = ? AND lower(invitee) = lower(?)",
                                  arguments: [space.id, refusal.invitee])
                try spaces.drop(refusal, in: tx)
                return UndoneShare(invitee: refusal.invitee, reason: refusal.reason, accounts: [], transactions: 0, stillInvited: othersInvited)
            }
        }
        return try await store.write { [spaces] tx in
            let accounts = try SpendingAccount.fetchAll(tx.db, sql: "SELECT * FROM spending_accounts WHERE space_id = ?", arguments: [space.id])
            var transactions = 0
            for account in accounts { transactions += try Self.carry(account.id, to: nil, in: tx) }
            try tx.db.execute(sql: "DELETE FROM spending_shares WHERE space_id = ?", arguments: [space.id])
            try spaces.drop(refusal, in: tx)
            try spaces.leave(spaceID: space.id, in: tx)
            return UndoneShare(invitee: refusal.invitee, reason: refusal.reason, accounts: accounts.map(\.name), transactions: transactions)
        }
    }

    // MARK: - Moving an account between spaces

    /// Moves account `id` to `space` (nil: the person's own) with its side of every transaction in
    /// the space it leaves: its expenses and incomes, transfers between it and an account that
    /// goes too or is elsewhere, and, of a transfer with an account that stays, its side alone (a
    /// whole transfer is split into two linked sides, `TransferLeg`). Returns how many transactions went.
    static func carry(_ id: String, to space: String?, in tx: LocalTransaction) throws -> Int {
        guard let account = try SpendingAccount.fetchOne(tx.db, sql: "SELECT * FROM spending_accounts WHERE id = ?", arguments: [id]) else { return 0 }
        let from = account.space
        try SpendingSchema.accounts.move(account, to: space, in: tx)
        let transactions = try SpendingTransaction.fetchAll(tx.db, sql: """
            SELECT * FROM spending_transactions WHERE (accountId = ?1 OR toAccountId = ?1) AND space_id IS ?2
            """, arguments: [id, from])
        var carried = 0
        for transaction in transactions {
            let otherID = transaction.accountId == id ? transaction.toAccountId : transaction.accountId
            // NB: another member's side of a transfer from an account of theirs stays in the space: it names what only they see.
            if let otherID, otherID != id,
               try !(Bool.fetchOne(tx.db, sql: "SELECT EXISTS (SELECT 1 FROM spending_accounts WHERE id = ?)", arguments: [otherID]) ?? false) {
                continue
            }
            let otherStays = try otherID.flatMap { other in
                try Row.fetchOne(tx.db, sql: "SELECT space_id FROM spending_accounts WHERE id = ?", arguments: [other])
            }.map { ($0["space_id"] as String?) == from } ?? false
            guard transaction.kind == .transfer, otherStays, otherID != id else {
                try Ledger.move(transaction, to: space, in: tx)
                carried += 1
                continue
            }
            switch transaction.leg {
            case nil:
                // The side of the account that stays keeps the record; this account's side is a new one that goes.
                var staying = transaction
                staying.leg = transaction.accountId == id ? .in : .out
                staying.linkId = UUIDv7.make()
                try SpendingSchema.transactions.update(staying.id, in: tx) { [staying] in
                    $0.leg = staying.leg
                    $0.linkId = staying.linkId
                }
                try SpendingSchema.transactions.insert(staying.otherLeg(id: staying.linkId!), space: space, in: tx)
                carried += 1
            case .out? where transaction.accountId == id, .in? where transaction.toAccountId == id:
                try Ledger.move(transaction, to: space, in: tx)
                carried += 1
            default:
                continue
            }
        }
        return carried
    }

    // MARK: -

    /// The shared space `account` is in, as this device knows it.
    private func sharedSpace(of account: SpendingAccount) throws -> Space {
        guard let id = account.space else { throw SpendingError.notShared(account.name) }
        guard let space = try spaces.list().first(where: { $0.id == id }) else { throw SpendingError.notShared(account.name) }
        return space
    }

    /// The shared space `reference` is in, when the person owns it.
    private func ownedSpace(of reference: String) throws -> Space {
        let account = try ledger.account(reference, allowArchived: true)
        let space = try sharedSpace(of: account)
        guard space.role == .owner else { throw SpendingError.sharedWithYou(account.name, owner: space.owner) }
        return space
    }
}
