import EventualAPI
import EventualKit
import Foundation
import GRDB

/// The households a person shares their pantry with: spaces of the engine, in the pantry's words.
/// Every change to membership is queued (it works offline and reaches the server at the next
/// sync); the household new items go to by default is kept per person, in their database.
public struct Household: Sendable {
    let spaces: Spaces
    let store: LocalStore

    init(spaces: Spaces, store: LocalStore) {
        self.spaces = spaces
        self.store = store
    }

    /// The households the person is in (their own items' space left out), by name.
    public func list() throws -> [Space] {
        try spaces.list().filter { $0.kind == .shared }
    }

    /// Every space the person is in, by id: to name an item's space.
    public func names() throws -> [String: String] {
        Dictionary(try spaces.list().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    /// Creates a household the person owns, usable at once on this device.
    public func create(_ name: String) async throws -> Space {
        // NB: two households of one name could then be told apart only by their ids.
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        if let same = try list().first(where: { $0.name.caseInsensitiveCompare(trimmed) == .orderedSame }) {
            throw PantryError.householdExists(same.name)
        }
        let id = try await spoken { try await spaces.create(name: name) }
        return try spaces.space(id)
    }

    /// Invites someone, by username or email, to `name` (nil: the one household, or the default).
    @discardableResult
    public func invite(_ invitee: String, as role: SpaceRole, to name: String?) async throws -> Space {
        let household = try self.household(name)
        try await spoken { try await spaces.invite(invitee, to: household.id, role: role) }
        return household
    }

    /// A household with its members: the server's, else the last copy.
    public func members(of name: String?) async throws -> Cached<SpaceDetails> {
        let household = try self.household(name)
        do {
            return try await spoken { try await spaces.members(of: household.id) }
        } catch CacheError.needsConnectionForFirstLoad(_, let reason) {
            throw PantryError.unreachable("Connect to see who is in \(household.name) (\(reason)): this device has never fetched them")
        }
    }

    /// Leaves a household: once the server hears it, its items leave this device.
    @discardableResult
    public func leave(_ name: String?) async throws -> Space {
        let household = try self.household(name)
        try await spoken { try await spaces.leave(household.id) }
        return household
    }

    /// Removes a member from a household the person owns.
    @discardableResult
    public func remove(_ member: String, from name: String?) async throws -> Space {
        let member = member.trimmingCharacters(in: .whitespaces)
        guard !member.isEmpty else { throw PantryError.invalidField("Say who: a member's username") }
        let household = try self.household(name)
        // NB: taking oneself out is leaving, said as such (its owner alone would delete the household).
        guard member.caseInsensitiveCompare(spaces.username) != .orderedSame else {
            throw PantryError.invalidField("To go, leave it: pantry household leave \"\(household.name)\"")
        }
        try await spoken { try await spaces.remove(member, from: household.id) }
        return household
    }

    /// Gives a member of a household the person owns another role; `owner` hands the household
    /// over (the person becomes an editor, and may then leave).
    @discardableResult
    public func setRole(_ role: SpaceRole, of member: String, in name: String?) async throws -> Space {
        let member = member.trimmingCharacters(in: .whitespaces)
        guard !member.isEmpty else { throw PantryError.invalidField("Say who: a member's username") }
        let household = try self.household(name)
        try await spoken { try await spaces.setRole(role, of: member, in: household.id) }
        return household
    }

    // MARK: - Where new items go

    /// Makes `name` the household new items go to (nil: the person's own items). Returns it.
    @discardableResult
    public func use(_ name: String?) async throws -> Space? {
        let household = try name.map { try self.household($0) }
        if let household { try Self.checkWritable(household) }
        try await store.write { tx in
            try tx.db.execute(sql: "DELETE FROM pantry_settings WHERE key = ?", arguments: [Self.defaultKey])
            if let household {
                try tx.db.execute(sql: "INSERT INTO pantry_settings (key, value) VALUES (?, ?)", arguments: [Self.defaultKey, household.id])
            }
        }
        return household
    }

    /// Where a new item goes: the household `name` names, else the default one; nil for the
    /// person's own items. `lost` names a default the person is no longer in (the item is theirs then).
    public func destination(_ name: String?) throws -> (space: Space?, lost: String?) {
        if let name {
            let household = try household(name)
            try Self.checkWritable(household)
            return (household, nil)
        }
        guard let id = try chosenDefault() else { return (nil, nil) }
        guard let household = try list().first(where: { $0.id == id }) else { return (nil, id) }
        return (household, nil)
    }

    /// The household new items go to by default, if the person chose one and is still in it.
    public func current() throws -> Space? {
        guard let id = try chosenDefault() else { return nil }
        return try list().first { $0.id == id }
    }

    // MARK: -

    static let defaultKey = "household.default"

    private func chosenDefault() throws -> String? {
        try store.reader.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM pantry_settings WHERE key = ?", arguments: [Self.defaultKey])
        }
    }

    /// The household `name` names; without a name, the default one, else the only one.
    func household(_ name: String?) throws -> Space {
        guard let name else {
            let households = try list()
            if let current = try current() { return current }
            guard households.count == 1 else { throw PantryError.whichHousehold(households.count) }
            return households[0]
        }
        let typed = name.trimmingCharacters(in: .whitespaces)
        // NB: an id's last characters, as a listing shows them, name a household too (two of one name, say).
        let byID = try list().filter { typed.count >= Self.shortestID && $0.id.lowercased().hasSuffix(typed.lowercased()) }
        if byID.count == 1 { return byID[0] }
        let space = try spoken { try spaces.space(typed) }
        guard space.kind == .shared else { throw PantryError.noHousehold(name) }
        return space
    }

    private static func checkWritable(_ household: Space) throws {
        guard household.role != .viewer else { throw PantryError.viewerOf(household.name) }
    }

    /// The shortest end of an id (an invitation's, a household's) taken for it: shorter ones may pick another.
    static let shortestID = 6

    /// The engine's refusals in the pantry's words.
    private func spoken<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let error as SpaceError { throw PantryError(error) }
    }

    private func spoken<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as SpaceError { throw PantryError(error) }
    }
}

extension PantryError {
    /// A space's refusal in the pantry's words: a household.
    init(_ error: SpaceError) {
        switch error {
        case .badName(let name):
            let shown = name.count > 40 ? name.prefix(40) + "…" : name
            self = .invalidField("'\(shown)' is not a household's name: give 1 to 60 characters")
        case .noOne: self = .invalidField("Say who: a username or an email")
        case .roleNotInvitable, .personalSpace, .notOwner, .notAMember, .memberAlready, .ownRole, .invitationReferenceTooShort, .noInvitation:
            self = .invalidField(error.description)
        case .ownerWithOthers(let name, let others):
            self = .refused("You own \(name) and \(others.joined(separator: ", ")) \(others.count == 1 ? "is" : "are") in it: "
                                 + "hand it over first (pantry household role \(others[0]) owner --in \"\(name)\")")
        case .unknownSpace(let name): self = .noHousehold(name)
        case .ambiguousName(let name): self = .ambiguousHousehold(name)
        }
    }
}
