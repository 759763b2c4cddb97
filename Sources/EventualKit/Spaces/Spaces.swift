import EventualAPI
import Foundation
import GRDB

/// The spaces a person shares with others, as an app uses them: every change to membership is a
/// queued call (it works offline and applies once, before the changes queued after it); what
/// the person is in is read from this device; invitations and members are asked of the server,
/// with the last answer kept for when it cannot be reached.
public struct Spaces: Sendable {
    let store: LocalStore
    /// The signed-in person's username.
    public let username: String
    let client: Client
    /// How long `invitations()` and `members(of:)` wait for the server when there is no copy to
    /// answer from (a first load).
    let patience: Duration
    /// How long they wait for it when there is a copy: a command's local budget.
    let localBudget: Duration
    /// What this process knows of the server: with a copy, it is read at once once the server was
    /// found silent or unreachable; without one, the server is asked within the local budget first.
    let connectivity: ConnectivityMonitor?
    /// The app these spaces are for (`AppName` raw value): a shared space belongs to one app, which
    /// alone lists it, invites to it and files records into it. Nil: every app's.
    let app: String?

    init(store: LocalStore, username: String, client: Client, patience: Duration, localBudget: Duration? = nil, app: String? = nil,
         connectivity: ConnectivityMonitor? = nil) {
        self.store = store
        self.username = username
        self.client = client
        self.patience = patience
        self.localBudget = localBudget ?? patience
        self.app = app
        self.connectivity = connectivity
    }

    /// Reads `key` from the server, else from the copy: with a copy, the server gets the local
    /// budget (a silent one costs a moment, not its first-byte wait) and none at all once this
    /// process found it silent or unreachable; without one, the patience of a first load.
    private func networkFirst<Value: Codable & Sendable>(_ key: String, as type: Value.Type,
                                                         fetch: @escaping @Sendable (String?) async throws -> FetchOutcome)
        async throws -> Cached<Value> {
        let cache = ReadCache(store: store)
        let saved = try cache.peek(key, as: Value.self)
        if let saved, connectivity?.foundOffline == true { return saved }
        // NB: with nothing to show, a server that does not answer a check within the local budget
        // is said at once, and as it is (silent, or not there), not after a first-byte wait.
        if saved == nil, let connectivity, await connectivity.checkOnce(within: localBudget) != .online {
            throw CacheError.needsConnectionForFirstLoad(key: key, reason: connectivity.foundSilent ? "the server is not answering" : "no connection to the server")
        }
        return try await cache.read(key, as: Value.self, policy: .networkFirst(timeout: saved == nil ? patience : localBudget), fetch: fetch)
    }

    /// The spaces the person is in, their own first: the app's own, and those no app claimed yet.
    public func list() throws -> [Space] {
        try store.reader.read { db in try SpaceTable.all(of: app, db) }
    }

    /// The space `idOrName` names: its id, else the one space so named.
    public func space(_ idOrName: String) throws -> Space {
        let spaces = try list()
        if let space = spaces.first(where: { $0.id == idOrName }) { return space }
        let named = spaces.filter { $0.name.caseInsensitiveCompare(idOrName) == .orderedSame }
        guard named.count == 1 else { throw named.isEmpty ? SpaceError.unknownSpace(idOrName) : SpaceError.ambiguousName(idOrName) }
        return named[0]
    }

    /// The space `id` names when the person may only look at it (a viewer), so that an app
    /// refuses their change on the device as the server would; nil for no space (the personal
    /// one), one they may change, or one this device does not know yet (the server judges that).
    public func viewedOnly(_ id: String?) throws -> Space? {
        guard let id else { return nil }
        let space: Space
        do { space = try self.space(id) } catch is SpaceError { return nil }
        return space.role == .viewer ? space : nil
    }

    /// Creates a shared space owned by the person, at once on this device (its changes can go
    /// in it straight away) and on the server with the next sync. Returns its id.
    @discardableResult
    public func create(name: String) async throws -> String {
        try await store.write { tx in try create(name: name, in: tx) }
    }

    /// Creates a shared space in the caller's transaction, so that what the app does with it (the
    /// invitation, the rows it moves into it) commits with it or not at all. Returns its id.
    @discardableResult
    public func create(name: String, in tx: LocalTransaction) throws -> String {
        let name = try Self.checkedName(name)
        let id = UUIDv7.make()
        try SpaceTable.insertCreated(id: id, name: name, owner: username, app: app, db: tx.db)
        try tx.enqueueCall(SpaceCall.create.rawValue, payload: SpaceCall.Create(id: id, name: name, app: app), space: id)
        return id
    }

    /// Invites someone, by username or email, to a space the person owns. An invitation by email
    /// never says whether the email has an account.
    public func invite(_ invitee: String, to space: String, role: SpaceRole = .editor) async throws {
        _ = try Self.checkedInvitee(invitee, role)
        let space = try shared(space)
        try await store.write { tx in try invite(invitee, toSpaceID: space.id, role: role, in: tx) }
    }

    /// Invites someone to the shared space `id` in the caller's transaction (one created in it
    /// too). Refused here when the person does not own it, or the invitee is in it already.
    public func invite(_ invitee: String, toSpaceID id: String, role: SpaceRole = .editor, in tx: LocalTransaction) throws {
        let invitee = try Self.checkedInvitee(invitee, role)
        guard let space = try SpaceTable.space(id, tx.db), app == nil || space.app == nil || space.app == app
        else { throw SpaceError.unknownSpace(id) }
        guard space.kind == .shared else { throw SpaceError.personalSpace }
        guard space.role == .owner else { throw SpaceError.notOwner(space.name, owner: space.owner) }
        if space.members.contains(where: { $0.username.caseInsensitiveCompare(invitee) == .orderedSame }) {
            throw SpaceError.memberAlready(invitee, space.name)
        }
        try tx.enqueueCall(SpaceCall.invite.rawValue, payload: SpaceCall.Invite(spaceId: space.id, invitee: invitee, role: role), space: space.id)
    }

    /// Accepts the invitation `reference` names (its id, or its last characters as a list shows
    /// them): the space's records arrive with the sync after the server hears it. Queued, so it
    /// works offline; answers the invitation when a list of them (the server's or the saved copy) knew it.
    @discardableResult
    public func accept(_ reference: String) async throws -> SpaceInvitation? {
        let (id, invitation) = try await invitation(reference)
        try await queue(.accept, SpaceCall.Answer(invitationId: id, app: app), space: nil)
        return invitation
    }

    /// Declines the invitation `reference` names, as `accept` finds it.
    @discardableResult
    public func decline(_ reference: String) async throws -> SpaceInvitation? {
        let (id, invitation) = try await invitation(reference)
        try await queue(.decline, SpaceCall.Answer(invitationId: id, app: app), space: nil)
        return invitation
    }

    /// The fewest characters of an invitation's id that may pick it.
    public static let shortestInvitationReference = 6

    /// The invitation `reference` names among those waiting: its whole id, or its last characters
    /// (at least `shortestInvitationReference`). With no list to look in (offline, never fetched),
    /// a whole id is taken as typed: the server says whether it waits.
    func invitation(_ reference: String) async throws -> (id: String, invitation: SpaceInvitation?) {
        let typed = reference.trimmingCharacters(in: .whitespaces)
        guard typed.count >= Self.shortestInvitationReference,
              !typed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw SpaceError.invitationReferenceTooShort(typed)
        }
        let known: [SpaceInvitation]
        do {
            known = try await invitations().value.waiting
        } catch {
            // NB: offline with no copy, a whole id is still sent as typed; a part of one cannot be looked up.
            guard UUID(uuidString: typed) != nil else { throw error }
            return (typed.lowercased(), nil)
        }
        let lowered = typed.lowercased()
        let matches = known.filter { $0.id.lowercased() == lowered || $0.id.lowercased().hasSuffix(lowered) }
        if matches.count == 1 { return (matches[0].id, matches[0]) }
        if matches.count > 1 { throw SpaceError.invitationReferenceTooShort(typed) }
        guard UUID(uuidString: typed) != nil else { throw SpaceError.noInvitation(typed) }
        return (lowered, nil)
    }

    /// Leaves a space: once the server hears it, this device deletes the space's records (their
    /// changes queued before this go first). Its owner leaves only when no one else is in it (the
    /// server then deletes it): with others in it, it is refused here, as the server would.
    public func leave(_ space: String) async throws {
        var space = try shared(space)
        // NB: who is in it as the server says now, when it answers: someone may have joined or left since the last pull.
        if space.role == .owner { space = await refreshed(space).space }
        try await store.write { [space] tx in try leave(space, in: tx) }
    }

    /// Leaves the space `id` in the caller's transaction (see `leave(_:)`).
    public func leave(spaceID id: String, in tx: LocalTransaction) throws {
        guard let space = try SpaceTable.space(id, tx.db), space.kind == .shared else { throw SpaceError.unknownSpace(id) }
        try leave(space, in: tx)
    }

    private func leave(_ space: Space, in tx: LocalTransaction) throws {
        let others = space.others(than: username)
        // NB: a hand-over queued before it goes first: she is an editor by the time the server hears her leave.
        let handedOver = try Self.waits(SpaceCall.setRole, in: space.id, as: SpaceCall.Role.self, tx.db) { $0.role == .owner }
        if space.role == .owner, !others.isEmpty, !handedOver { throw SpaceError.ownerWithOthers(space.name, others: others) }
        try tx.enqueueCall(SpaceCall.removeMember.rawValue, payload: SpaceCall.Member(spaceId: space.id, username: username), space: space.id)
    }

    /// Removes a member from a space the person owns. Refused here when the person does not own
    /// it, or when this device knows they are not (or will no longer be) in it.
    public func remove(_ member: String, from space: String) async throws {
        let (space, fresh) = try await knowing(member, in: try shared(space))
        guard member.caseInsensitiveCompare(username) != .orderedSame else { return try await leave(space.id) }
        try await store.write { tx in
            let member = try Self.checkedMember(member, of: space, fresh: fresh, tx.db)
            try tx.enqueueCall(SpaceCall.removeMember.rawValue, payload: SpaceCall.Member(spaceId: space.id, username: member), space: space.id)
        }
    }

    /// Gives a member another role in a space the person owns; `owner` hands the space over (the
    /// person becomes an editor). Refused here as `remove` is, and for the person themselves.
    public func setRole(_ role: SpaceRole, of member: String, in space: String) async throws {
        let (space, fresh) = try await knowing(member, in: try shared(space))
        guard member.caseInsensitiveCompare(username) != .orderedSame else {
            throw space.role == .owner ? SpaceError.ownRole(space.name) : SpaceError.notOwner(space.name, owner: space.owner)
        }
        try await store.write { tx in
            let member = try Self.checkedMember(member, of: space, fresh: fresh, tx.db)
            try tx.enqueueCall(SpaceCall.setRole.rawValue, payload: SpaceCall.Role(spaceId: space.id, username: member, role: role), space: space.id)
        }
    }

    /// `space` as the server says it now when this device does not know `member` in it (they may
    /// have joined since the last pull), so that a refusal is the server's word when it answers.
    private func knowing(_ member: String, in space: Space) async -> (space: Space, fresh: Bool) {
        guard !space.members.contains(where: { $0.username.caseInsensitiveCompare(member) == .orderedSame }) else { return (space, false) }
        return await refreshed(space)
    }

    /// `space` with the members the server lists now, when it answers within the patience
    /// (`fresh`); else as this device last heard.
    private func refreshed(_ space: Space) async -> (space: Space, fresh: Bool) {
        let fresh = (try? await members(of: space.id))?.source == .network
        return ((try? self.space(space.id)) ?? space, fresh)
    }

    /// The member of `space` (owned by the person) a change of membership names, as the space
    /// spells them; one this device knows is not in it, or whose removal waits, is refused.
    private static func checkedMember(_ member: String, of space: Space, fresh: Bool, _ db: Database) throws -> String {
        guard space.role == .owner else { throw SpaceError.notOwner(space.name, owner: space.owner) }
        let removing = try waits(SpaceCall.removeMember, in: space.id, as: SpaceCall.Member.self, db) {
            $0.username.caseInsensitiveCompare(member) == .orderedSame
        }
        if let known = space.members.first(where: { $0.username.caseInsensitiveCompare(member) == .orderedSame }), !removing {
            return known.username
        }
        // NB: refused on the server's word just heard, or a removal waiting; an old copy may miss someone who joined since: the server judges.
        guard !fresh, !removing else { throw SpaceError.notAMember(member, space.name) }
        return member
    }

    /// Whether a call of `call` about `space` waits to be sent whose payload is `matching`.
    private static func waits<Payload: Decodable>(_ call: SpaceCall, in space: String, as payload: Payload.Type, _ db: Database,
                                                  matching: (Payload) -> Bool) throws -> Bool {
        try OutboxTable.entries(state: .pending, db: db).contains { entry in
            entry.operation == call.rawValue && entry.space == space
                && (try? JSONDecoder().decode(Payload.self, from: entry.payload)).map(matching) == true
        }
    }

    // MARK: - Refused invitations

    /// The invitations the server refused (no one of that name, a member already, too many), oldest first.
    public func refusedInvitations() throws -> [RefusedInvitation] {
        try store.reader.read { db in
            try OutboxTable.entries(state: .failed, db: db).filter { $0.kind == .call && $0.operation == SpaceCall.invite.rawValue }.compactMap { entry in
                guard let invite = try? JSONDecoder().decode(SpaceCall.Invite.self, from: entry.payload) else { return nil }
                return RefusedInvitation(entryID: entry.id, spaceID: invite.spaceId, invitee: invite.invitee, role: invite.role,
                                         reason: entry.lastError ?? "refused by the server")
            }
        }
    }

    /// Drops a refused invitation from the outbox, in the caller's transaction (an app undoes
    /// what it did for it in the same one).
    public func drop(_ refusal: RefusedInvitation, in tx: LocalTransaction) throws {
        _ = try OutboxTable.discardFailed(id: refusal.entryID, db: tx.db)
    }

    /// The invitations waiting for the person's answer: the server's, else the last copy with its age.
    public func invitations() async throws -> Cached<SpaceInvitations> {
        let client = self.client
        // NB: ".2": the copy holds `SpaceInvitations`; an earlier copy (a bare list) is not read as one.
        return try await networkFirst("spaces.invitations.2", as: SpaceInvitations.self) { _ in
            let invitations: SpaceInvitations
            switch try await client.listInvitations(query: .init(app: app)) {
            case .ok(let answer):
                invitations = SpaceInvitations(try answer.body.json)
            case .unauthorized(let answer): throw try answer.body.json.spaceFailure
            case .badRequest(let answer): throw try answer.body.json.spaceFailure
            case .notFound(let answer): throw try answer.body.json.spaceFailure
            case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Listing the invitations")
            }
            return .fresh(try JSONEncoder.sorted.encode(invitations), etag: nil)
        }
    }

    /// A space with its members: the server's, else the last copy with its age.
    public func members(of space: String) async throws -> Cached<SpaceDetails> {
        let space = try self.space(space)
        let client = self.client, store = self.store
        let all: Cached<[SpaceDetails]>
        do {
            all = try await listing(client: client, store: store)
        } catch let error as CacheError {
            // NB: offline with no listing saved, the members the last pull said.
            guard let heard = try heard(space) else { throw error }
            return heard
        }
        let pulled = try heard(space)
        guard let details = all.value.first(where: { $0.id == space.id }),
              all.source == .network || pulled.map({ all.fetchedAt >= $0.fetchedAt }) ?? true else {
            // NB: a saved listing older than the last pull, or without a space joined since: the pull's word is newer.
            guard let pulled else { throw SpaceError.unknownSpace(space.name) }
            return pulled
        }
        return Cached(value: details, source: all.source, fetchedAt: all.fetchedAt)
    }

    /// A shared space as the last pull said it, with its members; nil when none has said them.
    private func heard(_ space: Space) throws -> Cached<SpaceDetails>? {
        guard !space.members.isEmpty else { return nil }
        let lastSync = try store.reader.read { db in try EngineSchema.value(.lastSyncAt, db).flatMap { Int64($0) } } ?? 0
        return Cached(value: SpaceDetails(id: space.id, name: space.name, kind: space.kind, role: space.role,
                                          owner: space.owner ?? space.members.first { $0.role == .owner }?.username ?? "",
                                          members: space.members, app: space.app),
                      source: .cache, fetchedAt: lastSync)
    }

    /// Every space with its members: the server's (kept for later), else the last copy.
    private func listing(client: Client, store: LocalStore) async throws -> Cached<[SpaceDetails]> {
        try await networkFirst("spaces", as: [SpaceDetails].self) { _ in
            let spaces: [SpaceDetails]
            switch try await client.listSpaces(query: .init(app: app)) {
            case .ok(let answer): spaces = try answer.body.json.spaces.map(SpaceDetails.init)
            case .unauthorized(let answer): throw try answer.body.json.spaceFailure
            case .badRequest(let answer): throw try answer.body.json.spaceFailure
            case .notFound(let answer): throw try answer.body.json.spaceFailure
            case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Listing the spaces")
            }
            // NB: the owners and roles the server says now, for `list()`; which spaces there are is the pull's.
            try await store.writer.write { db in try SpaceTable.update(from: spaces, db: db) }
            return .fresh(try JSONEncoder.sorted.encode(spaces), etag: nil)
        }
    }

    // MARK: -

    private func queue(_ call: SpaceCall, _ payload: some Encodable & Sendable, space: String?) async throws {
        try await store.write { tx in _ = try tx.enqueueCall(call.rawValue, payload: payload, space: space) }
    }

    /// A shared space the person is in; their own is refused (no one joins it, no one leaves it).
    private func shared(_ idOrName: String) throws -> Space {
        let space = try space(idOrName)
        guard space.kind == .shared else { throw SpaceError.personalSpace }
        return space
    }

    /// Someone named, invited as an editor or a viewer; spaces at the ends dropped.
    private static func checkedInvitee(_ invitee: String, _ role: SpaceRole) throws -> String {
        let invitee = invitee.trimmingCharacters(in: .whitespaces)
        guard !invitee.isEmpty else { throw SpaceError.noOne }
        guard role != .owner else { throw SpaceError.roleNotInvitable(role) }
        return invitee
    }

    /// 1 to 60 characters, no control character, spaces at the ends dropped.
    static func checkedName(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...60).contains(trimmed.count), !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw SpaceError.badName(name) }
        return trimmed
    }
}
