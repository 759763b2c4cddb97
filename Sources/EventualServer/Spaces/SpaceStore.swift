import EventualAPI
import EventualStorage
import Foundation
import SQLKit

/// Spaces, their members and invitations. Every write runs on the caller's transaction (`on sql`),
/// so that an Idempotency-Key's answer is stored with the change it reports.
///
/// A member who leaves or is removed keeps their row with `left_at` set: a push or a pull can then
/// name the space they are no longer in. A space whose owner left it alone is deleted that way
/// too: its records go, its row and its former members stay.
struct SpaceStore: Sendable {
    /// The most spaces one person is a member of (it keeps a pull's cursor within its 4,096 characters).
    static let maxMemberships = 100
    /// The name of every personal space.
    static let personalName = "Personal"
    /// The most invitations of one space that wait for an answer at once.
    static let maxPendingInvitationsPerSpace = 20
    /// The most invitations one person sends in any 24 hours (inviting someone again is free).
    static let maxInvitationsPerDay = 50
    /// How long an invitation waits for its answer; then it expires (and no longer counts).
    static let invitationLifetime: Int64 = 30 * 24 * 3600 * 1000

    let database: Database

    // MARK: Reads

    /// Whether a space of `kind` claimed by `spaceApp` is one `app` sees (nil: every app does).
    static func belongs(_ kind: SpaceKind, _ spaceApp: String?, to app: String?) -> Bool {
        guard let app, kind == .shared, let spaceApp else { return true }
        return spaceApp == app
    }

    /// Every space `userID` is a member of, with its members: the personal one first, then by
    /// name; with `app`, only the shared spaces of that app (and those no app claimed yet).
    func spaces(of userID: String, app: String? = nil) async throws -> [SpaceDetails] {
        try await database.withConnection { sql in
            let memberships = try await SpaceGate.memberships(of: userID, on: sql).filter { Self.belongs($0.kind, $0.app, to: app) }
            let members = try await Self.members(of: memberships.map(\.id), on: sql)
            return memberships
                .sorted { (Self.rank($0.kind), $0.name, $0.id) < (Self.rank($1.kind), $1.name, $1.id) }
                .map { Self.details(of: $0, members: members[$0.id] ?? []) }
        }
    }

    /// The pending invitations addressed to `userID`, by id or by their email once they verified
    /// it, oldest first; none to a space they are a member of already, none expired.
    /// `unverifiedEmail` is the caller's address when they have not verified it (nil otherwise),
    /// and `waitOnEmail` whether invitations sent to it wait for them to.
    /// With `app`, only invitations to spaces of that app (and to those no app claimed yet).
    func invitations(for userID: String, app: String? = nil, now: Int64)
        async throws -> (invitations: [SpaceInvitation], unverifiedEmail: String?, waitOnEmail: Bool)
    {
        try await database.withConnection { sql in
            let rows = try await sql.raw("""
                SELECT i.id, i.space_id, s.name AS space_name, s.app, u.username AS invited_by, i.role, i.created_at
                FROM space_invitations i
                JOIN spaces s ON s.id = i.space_id
                JOIN users u ON u.id = i.invited_by
                JOIN users me ON me.id = \(bind: userID)
                WHERE i.state = 'pending' AND i.created_at > \(bind: now - Self.invitationLifetime)
                  AND (i.invitee_user_id = me.id OR \(unsafeRaw: Self.provenEmailMatch))
                  AND NOT EXISTS (SELECT 1 FROM space_members m
                                  WHERE m.space_id = i.space_id AND m.user_id = me.id AND m.left_at IS NULL)
                ORDER BY i.created_at, i.id
                """).all().filter { Self.belongs(.shared, try $0.decode(column: "app", as: String?.self), to: app) }
            let me = try await sql.raw("""
                SELECT me.email, EXISTS (SELECT 1 FROM space_invitations i
                                         WHERE i.invitee_email = me.email_key AND i.state = 'pending'
                                           AND i.created_at > \(bind: now - Self.invitationLifetime)) AS waiting
                FROM users me WHERE me.id = \(bind: userID) AND me.email_verified_at IS NULL
                """).first()
            let unverified = try me?.decode(column: "email", as: String.self)
            let waiting = try me.map { try $0.decode(column: "waiting", as: Bool.self) } ?? false
            return (try rows.map { row in
                SpaceInvitation(
                    id: try row.decode(column: "id", as: String.self), spaceID: try row.decode(column: "space_id", as: String.self),
                    spaceName: try row.decode(column: "space_name", as: String.self),
                    invitedBy: try row.decode(column: "invited_by", as: String.self), role: try Self.enumValue(row, "role"),
                    createdAt: UnixMillis.date(milliseconds: try row.decode(column: "created_at", as: Int64.self)))
            }, unverified, waiting)
        }
    }

    /// The SQL condition that an invitation `i` was sent to the email of the caller `me`, and
    /// that `me` proved that address is theirs. NB: anyone may register any address without
    /// proving it; an invitation by email is for whoever reads that mailbox, not for them.
    private static let provenEmailMatch = "(i.invitee_email = me.email_key AND me.email_verified_at IS NOT NULL)"

    // MARK: Writes

    /// Creates a shared space `userID` owns; the same id created again by its owner answers the
    /// space as it is (`created` false).
    func create(id: String, name: String, app: String? = nil, by userID: String, now: Int64, on sql: any SQLDatabase) async throws
        -> (space: SpaceDetails, created: Bool)
    {
        if let existing = try await sql.select().columns("owner_id").from("spaces").where("id", .equal, id).first() {
            guard try existing.decode(column: "owner_id", as: String.self) == userID,
                  let space = try await Self.details(of: id, for: userID, on: sql)
            else { throw Refusal.conflict("The space id \(id) is taken: make another (a new UUID)") }
            return (space, false)
        }
        // NB: a person's id is their personal space's id, even before that space exists (an account
        // made by an import has none until its first push).
        if try await sql.select().column("id").from("users").where("id", .equal, id).first() != nil {
            throw Refusal.conflict("The space id \(id) is taken: make another (a new UUID)")
        }
        try await Self.requireRoomForOneMore(userID, on: sql)
        try await sql.insert(into: "spaces").columns("id", "name", "kind", "owner_id", "created_at", "app")
            .values(SQLBind(id), SQLBind(name), SQLBind(SpaceKind.shared.rawValue), SQLBind(userID), SQLBind(now), SQLBind(app)).run()
        try await sql.insert(into: "space_members").columns("space_id", "user_id", "role", "added_at")
            .values(SQLBind(id), SQLBind(userID), SQLBind(SpaceRole.owner.rawValue), SQLBind(now)).run()
        try await SpaceGate.openCounter(of: id, on: sql)
        guard let space = try await Self.details(of: id, for: userID, on: sql) else {
            throw StorageError.corrupt("the space \(id) vanished inside the transaction that created it")
        }
        return (space, true)
    }

    /// Invites `invitee` into the space (its owner only). By email nothing says whether an
    /// account has that address; inviting again replaces the pending invitation's role.
    ///
    /// Invitations are bounded: `maxPendingInvitationsPerSpace` wait in a space at once (those
    /// older than `invitationLifetime` expire), `maxInvitationsPerDay` new ones from one person
    /// in any 24 hours, and each counts its bytes in the inviter's `byteQuota`.
    func invite(_ invitee: Invitee, as role: SpaceRole, to spaceID: String, by userID: String, byteQuota: Int64 = .max, now: Int64,
                on sql: any SQLDatabase) async throws {
        let space = try await Self.ownedSharedSpace(spaceID, by: userID, doing: "invites", on: sql)
        try await sql.raw("""
            UPDATE space_invitations SET state = 'expired'
            WHERE space_id = \(bind: spaceID) AND state = 'pending' AND created_at <= \(bind: now - Self.invitationLifetime)
            """).run()
        let match: (column: String, value: String)
        switch invitee {
        case .username(let username):
            guard let person = try await Self.user(named: username, on: sql) else {
                throw Refusal.notFound("No one is called \(username)")
            }
            if try await SpaceGate.role(of: person.id, in: spaceID, on: sql) != nil {
                throw Refusal.conflict("\(person.username) is a member of \(space.name) already")
            }
            match = ("invitee_user_id", person.id)
        case .email(let email):
            let key = AccountRules.key(email)
            // NB: a member invited by email is answered like anyone else, so that the answer never
            // tells whether an account has that address; there is just nothing to store.
            if let person = try await sql.select().column("id").from("users").where("email_key", .equal, key).first(),
               try await SpaceGate.role(of: try person.decode(column: "id", as: String.self), in: spaceID, on: sql) != nil {
                return
            }
            match = ("invitee_email", key)
        }
        let pending = try await sql.select().column("id").from("space_invitations")
            .where("space_id", .equal, spaceID).where(SQLIdentifier(match.column), .equal, SQLBind(match.value))
            .where("state", .equal, "pending").first()
        if let pending {
            try await sql.update("space_invitations").set("role", to: role.rawValue).set("invited_by", to: userID)
                .where("id", .equal, try pending.decode(column: "id", as: String.self)).run()
            return
        }
        try await Self.requireRoomForAnotherInvitation(in: space, by: userID, now: now, on: sql)
        let id = UUID().uuidString.lowercased()
        let bytes = [id, spaceID, userID, match.value, role.rawValue, "pending"].reduce(Int64(8)) { $0 + Int64($1.utf8.count) }
        try await Self.requireQuota(for: bytes, invitingAs: userID, byteQuota: byteQuota, now: now, on: sql)
        try await sql.insert(into: "space_invitations")
            .columns("id", "space_id", "invited_by", match.column, "role", "created_at", "state")
            .values(SQLBind(id), SQLBind(spaceID), SQLBind(userID), SQLBind(match.value),
                    SQLBind(role.rawValue), SQLBind(now), SQLBind("pending"))
            .run()
    }

    /// Refuses (413) an invitation of `bytes` that would take the inviter past `byteQuota`, with
    /// what they store and the invitations of theirs that wait for an answer. NB: counted while
    /// they wait, from their rows, rather than moved in `storage_usage`: an answered invitation
    /// frees its room at once whichever way it was answered (accepted, declined, withdrawn,
    /// expired, or its space deleted), with no count to keep in step with each.
    private static func requireQuota(for bytes: Int64, invitingAs userID: String, byteQuota: Int64, now: Int64,
                                     on sql: any SQLDatabase) async throws {
        guard byteQuota < .max else { return }
        let stored = try await sql.select().column("bytes").from("storage_usage").where("user_id", .equal, userID).first()?
            .decode(column: "bytes", as: Int64.self) ?? 0
        let waiting = try await sql.raw("""
            SELECT CAST(COALESCE(SUM(LENGTH(id) + LENGTH(space_id) + LENGTH(invited_by) + COALESCE(LENGTH(invitee_user_id), 0)
                                     + COALESCE(LENGTH(invitee_email), 0) + LENGTH(role) + LENGTH(state) + 8), 0) AS BIGINT) AS bytes
            FROM space_invitations
            WHERE invited_by = \(bind: userID) AND state = 'pending' AND created_at > \(bind: now - invitationLifetime)
            """).first()?.decode(column: "bytes", as: Int64.self) ?? 0
        let (total, overflow) = stored.addingReportingOverflow(waiting)
        guard !overflow, total <= byteQuota - min(bytes, byteQuota) else {
            throw Refusal.quotaExceeded("Quota reached: you store \(ByteCount.text(total)) with the invitations that wait for"
                + " an answer, and at most \(ByteCount.text(byteQuota)) are allowed. Delete records or products you no longer"
                + " need, or wait for answers (an invitation expires 30 days after it was sent)")
        }
    }

    /// Refuses another invitation past the space's pending ones (409) or the inviter's day (429).
    private static func requireRoomForAnotherInvitation(in space: SpaceAccess, by userID: String, now: Int64,
                                                        on sql: any SQLDatabase) async throws {
        let pending = try await sql.raw("""
            SELECT COUNT(*) AS n FROM space_invitations WHERE space_id = \(bind: space.id) AND state = 'pending'
            """).first()?.decode(column: "n", as: Int.self) ?? 0
        guard pending < maxPendingInvitationsPerSpace else {
            throw Refusal.conflict("\(space.name) has \(maxPendingInvitationsPerSpace) invitations waiting for an answer, the most a"
                + " space may have: wait for answers (an invitation expires 30 days after it was sent)")
        }
        let day: Int64 = 24 * 3600 * 1000
        let recent = try await sql.raw("""
            SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM space_invitations
            WHERE invited_by = \(bind: userID) AND created_at > \(bind: now - day)
            """).first()
        let sent = try recent?.decode(column: "n", as: Int.self) ?? 0
        guard sent < maxInvitationsPerDay else {
            let oldest = try recent?.decode(column: "oldest", as: Int64?.self) ?? now
            let seconds = Int(max(1, (oldest + day - now + 999) / 1000))
            throw Refusal.limitReached("You sent \(maxInvitationsPerDay) invitations in the last 24 hours, the most one person may:"
                + " try again in \(Throttle.describe(seconds: seconds))", retryAfter: seconds)
        }
    }

    /// Makes `userID` a member with the invitation's role; accepting again answers the same.
    func accept(invitation invitationID: String, by userID: String, app: String? = nil, now: Int64,
                on sql: any SQLDatabase) async throws -> SpaceDetails {
        let invitation = try await Self.invitation(invitationID, for: userID, app: app, on: sql)
        if invitation.state == "pending", invitation.createdAt <= now - Self.invitationLifetime {
            throw Refusal.conflict("This invitation to \(invitation.spaceName) expired 30 days after it was sent: ask its owner for a new one")
        }
        switch invitation.state {
        case "pending":
            if try await SpaceGate.role(of: userID, in: invitation.spaceID, on: sql) == nil {
                try await Self.requireRoomForOneMore(userID, on: sql)
                try await sql.raw("""
                    INSERT INTO space_members (space_id, user_id, role, added_at) VALUES
                    (\(bind: invitation.spaceID), \(bind: userID), \(bind: invitation.role), \(bind: now))
                    ON CONFLICT (space_id, user_id) DO UPDATE SET role = excluded.role, added_at = excluded.added_at, left_at = NULL
                    """).run()
            }
            // NB: every invitation to this space the person holds is answered by joining it.
            try await sql.raw("""
                UPDATE space_invitations SET state = 'accepted'
                WHERE space_id = \(bind: invitation.spaceID) AND state = 'pending'
                  AND (invitee_user_id = \(bind: userID)
                       OR invitee_email = (SELECT email_key FROM users WHERE id = \(bind: userID) AND email_verified_at IS NOT NULL))
                """).run()
            try await sql.update("space_invitations").set("state", to: "accepted").where("id", .equal, invitationID).run()
        case "accepted":
            break
        case "declined":
            throw Refusal.conflict("You declined this invitation to \(invitation.spaceName): ask its owner for a new one")
        default:
            throw Refusal.conflict("This invitation to \(invitation.spaceName) was withdrawn")
        }
        guard let space = try await Self.details(of: invitation.spaceID, for: userID, on: sql) else {
            throw Refusal.conflict("You are no longer a member of \(invitation.spaceName): ask its owner for a new invitation")
        }
        return space
    }

    /// Declines an invitation; declining again, or one withdrawn, changes nothing.
    func decline(invitation invitationID: String, by userID: String, app: String? = nil, on sql: any SQLDatabase) async throws {
        let invitation = try await Self.invitation(invitationID, for: userID, app: app, on: sql)
        switch invitation.state {
        case "pending":
            try await sql.update("space_invitations").set("state", to: "declined").where("id", .equal, invitationID).run()
        case "accepted":
            throw Refusal.conflict("You accepted this invitation to \(invitation.spaceName): leave the space instead")
        default:
            break
        }
    }

    /// Gives `username` another role (the owner only); `owner` hands the space over, and the old
    /// owner becomes an editor.
    func setRole(_ role: SpaceRole, of username: String, in spaceID: String, by userID: String,
                 on sql: any SQLDatabase) async throws -> SpaceDetails {
        // NB: a change of owner or a removal waits for pushes in flight (and for another change of
        // the space's members), so it reads roles no one else is changing and moves bytes only
        // after every push that counted them.
        try await SpaceGate.lock([spaceID], on: sql)
        let space = try await Self.ownedSharedSpace(spaceID, by: userID, doing: "changes roles", on: sql)
        let member = try await Self.currentMember(username, of: space, on: sql)
        if member.id == userID {
            guard role == .owner else {
                throw Refusal.conflict("You own \(space.name): make another member its owner first")
            }
        } else if role == .owner {
            try await sql.update("space_members").set("role", to: SpaceRole.owner.rawValue)
                .where("space_id", .equal, spaceID).where("user_id", .equal, member.id).run()
            try await sql.update("space_members").set("role", to: SpaceRole.editor.rawValue)
                .where("space_id", .equal, spaceID).where("user_id", .equal, userID).run()
            try await sql.update("spaces").set("owner_id", to: member.id).where("id", .equal, spaceID).run()
            // A space's records count against its owner: their bytes move with it. NB: in user id
            // order, as a push takes them, so that two hand-overs the other way round cannot deadlock.
            let bytes = try await Self.storedBytes(of: spaceID, on: sql)
            for (owner, delta) in [(userID, -bytes), (member.id, bytes)].sorted(by: { $0.0 < $1.0 }) {
                try await StorageUsage.add(delta, for: owner, quota: .max, on: sql)
            }
        } else {
            try await sql.update("space_members").set("role", to: role.rawValue)
                .where("space_id", .equal, spaceID).where("user_id", .equal, member.id).run()
        }
        guard let details = try await Self.details(of: spaceID, for: userID, on: sql) else {
            throw StorageError.corrupt("the space \(spaceID) lost its member \(userID) inside their transaction")
        }
        return details
    }

    /// The owner removes a member, or a member removes themselves. The owner leaving alone deletes
    /// the space's records; someone who is no longer a member changes nothing.
    func remove(_ username: String, from spaceID: String, by userID: String, now: Int64, on sql: any SQLDatabase) async throws {
        // NB: a change of owner or a removal waits for pushes in flight (and for another change of
        // the space's members), so it reads roles no one else is changing and moves bytes only
        // after every push that counted them.
        try await SpaceGate.lock([spaceID], on: sql)
        guard let space = try await SpaceGate.access(of: userID, to: spaceID, on: sql), let callerRole = space.currentRole else {
            throw SpaceGate.notAMember(spaceID)
        }
        guard space.kind == .shared else { throw Refusal.conflict("Your personal space is yours alone") }
        guard let person = try await Self.user(named: username, on: sql) else {
            throw Refusal.notFound("No one is called \(username)")
        }
        guard person.id == userID || callerRole == .owner else {
            throw Refusal.notTheOwner("Only the owner of \(space.name) removes members; you may leave it")
        }
        guard let role = try await SpaceGate.role(of: person.id, in: spaceID, on: sql) else {
            if try await SpaceGate.access(of: person.id, to: spaceID, on: sql)?.left == true { return }
            throw Refusal.notFound("\(person.username) is not a member of \(space.name)")
        }
        if role == .owner {
            let others = try await sql.raw("""
                SELECT COUNT(*) AS n FROM space_members
                WHERE space_id = \(bind: spaceID) AND left_at IS NULL AND user_id <> \(bind: userID)
                """).first()?.decode(column: "n", as: Int.self) ?? 0
            guard others == 0 else {
                throw Refusal.conflict("You own \(space.name): make another member its owner first")
            }
            let bytes = try await Self.storedBytes(of: spaceID, on: sql)
            try await StorageUsage.add(-bytes, for: userID, quota: .max, on: sql)
            try await sql.delete(from: "sync_records").where("space_id", .equal, spaceID).run()
            try await sql.delete(from: "attachments").where("space_id", .equal, spaceID).run()
            try await sql.update("space_invitations").set("state", to: "withdrawn")
                .where("space_id", .equal, spaceID).where("state", .equal, "pending").run()
        }
        try await sql.update("space_members").set("left_at", to: now)
            .where("space_id", .equal, spaceID).where("user_id", .equal, person.id).run()
    }

    // MARK: Parts

    private struct InvitationRow {
        let spaceID: String
        let spaceName: String
        let role: String
        let state: String
        let createdAt: Int64
    }

    private static func requireRoomForOneMore(_ userID: String, on sql: any SQLDatabase) async throws {
        let count = try await sql.raw("""
            SELECT COUNT(*) AS n FROM space_members WHERE user_id = \(bind: userID) AND left_at IS NULL
            """).first()?.decode(column: "n", as: Int.self) ?? 0
        guard count < maxMemberships else {
            throw Refusal.conflict("You are a member of \(maxMemberships) spaces, the most one person may be: leave one first")
        }
    }

    /// The space, if `userID` owns it and it is shared; else the refusal a caller gets.
    private static func ownedSharedSpace(_ spaceID: String, by userID: String, doing what: String,
                                         on sql: any SQLDatabase) async throws -> SpaceAccess {
        guard let space = try await SpaceGate.access(of: userID, to: spaceID, on: sql), let role = space.currentRole else {
            throw SpaceGate.notAMember(spaceID)
        }
        guard space.kind == .shared else { throw Refusal.conflict("Your personal space is yours alone") }
        guard role == .owner else { throw Refusal.notTheOwner("Only the owner of \(space.name) \(what)") }
        return space
    }

    private static func user(named username: String, on sql: any SQLDatabase) async throws -> (id: String, username: String)? {
        guard let row = try await sql.select().columns("id", "username").from("users")
            .where("username_key", .equal, AccountRules.key(username)).first()
        else { return nil }
        return (try row.decode(column: "id", as: String.self), try row.decode(column: "username", as: String.self))
    }

    private static func currentMember(_ username: String, of space: SpaceAccess, on sql: any SQLDatabase) async throws
        -> (id: String, username: String)
    {
        guard let person = try await user(named: username, on: sql) else { throw Refusal.notFound("No one is called \(username)") }
        guard try await SpaceGate.role(of: person.id, in: space.id, on: sql) != nil else {
            throw Refusal.notFound("\(person.username) is not a member of \(space.name)")
        }
        return person
    }

    /// An invitation addressed to `userID` (by id or by their email), to a space `app` sees (nil:
    /// any), else a 404.
    private static func invitation(_ invitationID: String, for userID: String, app: String? = nil,
                                   on sql: any SQLDatabase) async throws -> InvitationRow {
        guard let row = try await sql.raw("""
            SELECT i.space_id, s.name, s.app, i.role, i.state, i.created_at FROM space_invitations i
            JOIN spaces s ON s.id = i.space_id
            JOIN users me ON me.id = \(bind: userID)
            WHERE i.id = \(bind: invitationID) AND (i.invitee_user_id = me.id OR \(unsafeRaw: provenEmailMatch))
            """).first(),
            belongs(.shared, try row.decode(column: "app", as: String?.self), to: app)
        else { throw Refusal.notFound("You have no invitation \(invitationID.prefix(128))") }
        return InvitationRow(spaceID: try row.decode(column: "space_id", as: String.self), spaceName: try row.decode(column: "name", as: String.self),
                             role: try row.decode(column: "role", as: String.self), state: try row.decode(column: "state", as: String.self),
                             createdAt: try row.decode(column: "created_at", as: Int64.self))
    }

    /// The bytes the space's records and complete attachments take, as `StorageUsage` counts them.
    private static func storedBytes(of spaceID: String, on sql: any SQLDatabase) async throws -> Int64 {
        let rows = try await sql.select().columns("fields", "field_stamps", "counter_deltas", "tombstone").from("sync_records")
            .where("space_id", .equal, spaceID).all()
        let attachments = try await sql.raw("""
            SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) AS bytes FROM attachments WHERE space_id = \(bind: spaceID) AND complete = 1
            """).first()?.decode(column: "bytes", as: Int64.self) ?? 0
        return try rows.reduce(attachments) { total, row in
            total + StorageUsage.bytes(of: .init(
                fields: try row.decode(column: "fields", as: String.self), fieldStamps: try row.decode(column: "field_stamps", as: String.self),
                counterDeltas: try row.decode(column: "counter_deltas", as: String?.self),
                tombstone: try row.decode(column: "tombstone", as: String?.self)))
        }
    }

    /// The space as `userID` sees it, nil when they are not a member.
    private static func details(of spaceID: String, for userID: String, on sql: any SQLDatabase) async throws -> SpaceDetails? {
        guard let space = try await SpaceGate.access(of: userID, to: spaceID, on: sql), let role = space.currentRole else {
            return nil
        }
        let members = try await members(of: [spaceID], on: sql)
        return details(of: SpaceSummary(id: space.id, name: space.name, kind: space.kind, role: role, app: space.app),
                       members: members[spaceID] ?? [])
    }

    private static func details(of membership: SpaceSummary, members: [SpaceMember]) -> SpaceDetails {
        let listed = membership.with(members: members)
        return SpaceDetails(id: listed.id, name: listed.name, kind: listed.kind, role: listed.role, owner: listed.owner ?? "",
                            members: listed.members ?? [], app: listed.app)
    }

    /// The current members of each space, by space id.
    static func members(of spaceIDs: [String], on sql: any SQLDatabase) async throws -> [String: [SpaceMember]] {
        var members: [String: [SpaceMember]] = [:]
        for chunk in spaceIDs.chunks(of: SpaceGate.idsPerStatement) {
            let rows = try await sql.select().columns(SQLColumn("space_id", table: "m"), SQLColumn("username", table: "u"),
                                                      SQLColumn("role", table: "m"), SQLColumn("added_at", table: "m"))
                .from(SQLAlias(SQLIdentifier("space_members"), as: SQLIdentifier("m")))
                .join(SQLAlias(SQLIdentifier("users"), as: SQLIdentifier("u")), method: SQLJoinMethod.inner,
                      on: SQLColumn("id", table: "u"), .equal, SQLColumn("user_id", table: "m"))
                .where(SQLColumn("space_id", table: "m"), .in, SQLBind.group(Array(chunk)))
                .where(SQLColumn("left_at", table: "m"), .is, SQLLiteral.null)
                .all()
            for row in rows {
                members[try row.decode(column: "space_id", as: String.self), default: []].append(SpaceMember(
                    username: try row.decode(column: "username", as: String.self), role: try enumValue(row, "role"),
                    since: UnixMillis.date(milliseconds: try row.decode(column: "added_at", as: Int64.self))))
            }
        }
        return members
    }

    /// The personal space comes before the shared ones.
    private static func rank(_ kind: SpaceKind) -> Int { kind == .personal ? 0 : 1 }

    private static func enumValue<Value: RawRepresentable>(_ row: any SQLRow, _ column: String) throws -> Value where Value.RawValue == String {
        let raw = try row.decode(column: column, as: String.self)
        guard let value = Value(rawValue: raw) else { throw StorageError.corrupt("\(column) '\(raw)' is not a \(Value.self)") }
        return value
    }
}
