import EventualAPI
import EventualStorage
import SQLKit

/// What one person may do in one space, as the gate reads it.
struct SpaceAccess: Sendable, Equatable {
    let id: String
    let name: String
    let ownerID: String
    let kind: SpaceKind
    /// The app whose records a shared space holds; nil for a personal space, or one not claimed yet.
    var app: String?
    /// The person's role, nil when they never were a member.
    let role: SpaceRole?
    /// They were a member and left or were removed.
    let left: Bool
    /// The space counter's value: the seq of its newest change (0 before the first).
    let lastSeq: Int64

    /// The person's role now, nil when they are not a member (any more).
    var currentRole: SpaceRole? { left ? nil : role }

    /// Why the person's changes to the space's records are refused; nil when they may write.
    var refusalToWrite: String? {
        guard let role else { return SpaceGate.notAMember(id).message }
        if left { return "You are no longer a member of \(name)" }
        if !role.writes { return "You are a viewer of \(name): only its owner and editors change it" }
        return nil
    }
}

/// The one way into a space: its counter, the lock on it, and who is in it. Sync, spaces and
/// attachments all go through here, so that the rules below hold in one place.
///
/// Every space has a counter row (`sync_counters`) whose `last_seq` is the seq of its newest
/// change. Whatever must not interleave with a push to a space takes the counter's lock first,
/// in its own transaction, and holds it until COMMIT: a push (it takes seq values and merges
/// into the latest committed records), a change of members or owner (a push reads the pusher's
/// role after the lock, so it never sees one half made), the completion or collection of an
/// attachment (which moves the owner's bytes), and the purge of deleted records. Spaces are
/// locked in id order, so that two transactions sharing spaces cannot deadlock.
///
/// NB: on PostgreSQL the lock is `SELECT ... FOR UPDATE` on the counter rows. SQLite's single
/// writer connection makes every write transaction exclusive already, so nothing is taken there.
enum SpaceGate {
    /// Rows per statement, well under SQLite's and PostgreSQL's limits on bound values.
    static let idsPerStatement = 100

    // MARK: The counter

    /// Locks the counters of `spaceIDs` until the transaction ends: the only place that does.
    static func lock(_ spaceIDs: [String], on sql: any SQLDatabase) async throws {
        guard sql.dialect.name == "postgresql" else { return }
        for chunk in Set(spaceIDs).sorted().chunks(of: idsPerStatement) {
            try await sql.raw("""
                SELECT space_id FROM sync_counters WHERE space_id IN (\(binds: Array(chunk))) ORDER BY space_id FOR UPDATE
                """).run()
        }
    }

    /// Locks the counters of `spaceIDs`, then reads what `userID` may do in each (a space that
    /// does not exist is left out). The person's personal space is made if it is missing (an
    /// account made by an import has none until it writes).
    static func enter(_ spaceIDs: [String], as userID: String, now: Int64, on sql: any SQLDatabase) async throws -> [String: SpaceAccess] {
        try await lock(spaceIDs, on: sql)
        var access = try await self.access(of: userID, to: spaceIDs, on: sql)
        if spaceIDs.contains(userID), access[userID] == nil {
            try await openPersonalSpace(of: userID, now: now, on: sql)
            try await lock([userID], on: sql)
            access.merge(try await self.access(of: userID, to: [userID], on: sql)) { $1 }
        }
        return access
    }

    /// Starts a new space's counter at 0 (nothing when it has one).
    static func openCounter(of spaceID: String, on sql: any SQLDatabase) async throws {
        try await sql.insert(into: "sync_counters").columns("space_id", "last_seq")
            .values(SQLBind(spaceID), SQLBind(Int64(0)))
            .ignoringConflicts(with: ["space_id"]).run()
    }

    /// Moves a locked space's counter to `seq`, the last a push took, and files the commit in the
    /// history with a new tag (`SyncHistory`).
    static func advance(_ spaceID: String, to seq: Int64, on sql: any SQLDatabase) async throws {
        try await sql.update("sync_counters").set("last_seq", to: seq).where("space_id", .equal, spaceID).run()
        try await sql.insert(into: "sync_history").columns("space_id", "seq", "tag")
            .values(SQLBind(spaceID), SQLBind(seq), SQLBind(SyncHistory.newTag())).run()
    }

    /// The newest commit of each of `spaceIDs` that has one (a space nothing was written to has none).
    /// NB: a space whose newest commit predates the history gets its tag here, once.
    static func heads(of spaceIDs: [String], on sql: any SQLDatabase) async throws -> [SyncHead] {
        var heads: [SyncHead] = []
        for chunk in Set(spaceIDs).sorted().chunks(of: idsPerStatement) {
            let rows = try await sql.raw("""
                SELECT c.space_id, c.last_seq, h.tag FROM sync_counters c
                LEFT JOIN sync_history h ON h.space_id = c.space_id AND h.seq = c.last_seq
                WHERE c.space_id IN (\(binds: Array(chunk))) AND c.last_seq > 0 ORDER BY c.space_id
                """).all()
            for row in rows {
                let space = try row.decode(column: "space_id", as: String.self), seq = try row.decode(column: "last_seq", as: Int64.self)
                if let tag = try row.decode(column: "tag", as: String?.self) {
                    heads.append(SyncHead(space: space, seq: seq, tag: tag))
                    continue
                }
                try await sql.insert(into: "sync_history").columns("space_id", "seq", "tag")
                    .values(SQLBind(space), SQLBind(seq), SQLBind(SyncHistory.newTag()))
                    .ignoringConflicts(with: ["space_id", "seq"]).run()
                let tag = try await sql.select().column("tag").from("sync_history")
                    .where("space_id", .equal, space).where("seq", .equal, seq).first()?.decode(column: "tag", as: String.self)
                if let tag { heads.append(SyncHead(space: space, seq: seq, tag: tag)) }
            }
        }
        return heads
    }

    /// Of `tags`, those the history does not hold: commits a device saw that the server lost.
    static func unknownTags(_ tags: [String], on sql: any SQLDatabase) async throws -> [String] {
        var known = Set<String>()
        for chunk in Set(tags).sorted().chunks(of: idsPerStatement) {
            let rows = try await sql.select().column("tag").from("sync_history").where("tag", .in, Array(chunk)).all()
            for row in rows { known.insert(try row.decode(column: "tag", as: String.self)) }
        }
        return tags.filter { !known.contains($0) }
    }

    /// Each space's counter value now, those that exist.
    static func lastSeqs(of spaceIDs: [String], on sql: any SQLDatabase) async throws -> [String: Int64] {
        var seqs: [String: Int64] = [:]
        for chunk in spaceIDs.chunks(of: idsPerStatement) {
            let rows = try await sql.select().columns("space_id", "last_seq").from("sync_counters")
                .where("space_id", .in, Array(chunk)).all()
            for row in rows { seqs[try row.decode(column: "space_id", as: String.self)] = try row.decode(column: "last_seq", as: Int64.self) }
        }
        return seqs
    }

    /// The people who belong to each space now (those with none are left out).
    static func members(of spaceIDs: [String], on sql: any SQLDatabase) async throws -> [String: [String]] {
        var members: [String: [String]] = [:]
        for chunk in spaceIDs.chunks(of: idsPerStatement) {
            let rows = try await sql.select().columns("space_id", "user_id").from("space_members")
                .where("space_id", .in, Array(chunk)).where("left_at", .is, SQLLiteral.null).all()
            for row in rows {
                members[try row.decode(column: "space_id", as: String.self), default: []].append(try row.decode(column: "user_id", as: String.self))
            }
        }
        return members
    }

    /// Raises a locked space's `purged_through` to `seq` (never lowers it): a cursor below it
    /// missed a deletion the server no longer keeps.
    static func markPurged(_ spaceID: String, through seq: Int64, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            UPDATE sync_counters SET purged_through = CASE WHEN purged_through > \(bind: seq) THEN purged_through ELSE \(bind: seq) END
            WHERE space_id = \(bind: spaceID)
            """).run()
    }

    /// The `purged_through` of each of `spaceIDs` that has purged anything.
    static func purgedThrough(_ spaceIDs: [String], on sql: any SQLDatabase) async throws -> [String: Int64] {
        var purged: [String: Int64] = [:]
        for chunk in spaceIDs.chunks(of: idsPerStatement) {
            let rows = try await sql.select().columns("space_id", "purged_through").from("sync_counters")
                .where("space_id", .in, Array(chunk)).where("purged_through", .greaterThan, 0).all()
            for row in rows {
                purged[try row.decode(column: "space_id", as: String.self)] = try row.decode(column: "purged_through", as: Int64.self)
            }
        }
        return purged
    }

    // MARK: Who is in

    /// What `userID` may do in each of `spaceIDs` that exists (every space has its counter from the
    /// transaction that made it).
    static func access(of userID: String, to spaceIDs: [String], on sql: any SQLDatabase) async throws -> [String: SpaceAccess] {
        var access: [String: SpaceAccess] = [:]
        for chunk in Set(spaceIDs).sorted().chunks(of: idsPerStatement) {
            let rows = try await sql.raw("""
                SELECT s.id, s.name, s.owner_id, s.kind, s.app, c.last_seq, m.role, m.left_at
                FROM spaces s JOIN sync_counters c ON c.space_id = s.id
                LEFT JOIN space_members m ON m.space_id = s.id AND m.user_id = \(bind: userID)
                WHERE s.id IN (\(binds: Array(chunk)))
                """).all()
            for row in rows {
                let id = try row.decode(column: "id", as: String.self)
                access[id] = SpaceAccess(
                    id: id, name: try row.decode(column: "name", as: String.self), ownerID: try row.decode(column: "owner_id", as: String.self),
                    kind: try value(row, "kind"), app: try row.decode(column: "app", as: String?.self),
                    role: try row.decode(column: "role", as: String?.self) == nil ? nil : try value(row, "role") as SpaceRole,
                    left: try row.decode(column: "left_at", as: Int64?.self) != nil,
                    lastSeq: try row.decode(column: "last_seq", as: Int64.self))
            }
        }
        return access
    }

    /// What `userID` may do in the space, nil when it does not exist.
    static func access(of userID: String, to spaceID: String, on sql: any SQLDatabase) async throws -> SpaceAccess? {
        try await access(of: userID, to: [spaceID], on: sql)[spaceID]
    }

    /// `userID`'s role in the space now, nil when they are not a member (any more).
    static func role(of userID: String, in spaceID: String, on sql: any SQLDatabase) async throws -> SpaceRole? {
        try await access(of: userID, to: spaceID, on: sql)?.currentRole
    }

    /// The spaces `userID` is a member of: the personal one first, then by id (the order a pull reads them in).
    static func memberships(of userID: String, on sql: any SQLDatabase) async throws -> [SpaceSummary] {
        let rows = try await sql.raw("""
            SELECT s.id, s.name, s.kind, s.app, m.role FROM space_members m JOIN spaces s ON s.id = m.space_id
            WHERE m.user_id = \(bind: userID) AND m.left_at IS NULL
            """).all()
        let spaces = try rows.map { row in
            SpaceSummary(id: try row.decode(column: "id", as: String.self), name: try row.decode(column: "name", as: String.self),
                            kind: try value(row, "kind"), role: try value(row, "role"),
                            app: try row.decode(column: "app", as: String?.self))
        }
        return spaces.sorted { ($0.kind == .personal ? 0 : 1, $0.id) < ($1.kind == .personal ? 0 : 1, $1.id) }
    }

    /// The spaces `userID` was a member of and is no longer.
    static func formerSpaces(of userID: String, on sql: any SQLDatabase) async throws -> [SpaceRef] {
        try await sql.raw("""
            SELECT s.id, s.name FROM space_members m JOIN spaces s ON s.id = m.space_id
            WHERE m.user_id = \(bind: userID) AND m.left_at IS NOT NULL
            """).all().map { SpaceRef(id: try $0.decode(column: "id", as: String.self), name: try $0.decode(column: "name", as: String.self)) }
    }

    /// The SQL condition that a row's `space_id` (qualified by `table`) is a space `userID` is a member of now.
    static func isMember(_ userID: String, spaceColumn: String) -> SQLQueryString {
        "\(unsafeRaw: spaceColumn) IN (SELECT space_id FROM space_members WHERE user_id = \(bind: userID) AND left_at IS NULL)"
    }

    /// Makes `userID`'s personal space (its id is theirs), unless it exists.
    static func openPersonalSpace(of userID: String, now: Int64, on sql: any SQLDatabase) async throws {
        try await sql.insert(into: "spaces").columns("id", "name", "kind", "owner_id", "created_at")
            .values(SQLBind(userID), SQLBind(SpaceStore.personalName), SQLBind(SpaceKind.personal.rawValue), SQLBind(userID), SQLBind(now))
            .ignoringConflicts(with: ["id"]).run()
        try await sql.insert(into: "space_members").columns("space_id", "user_id", "role", "added_at")
            .values(SQLBind(userID), SQLBind(userID), SQLBind(SpaceRole.owner.rawValue), SQLBind(now))
            .ignoringConflicts(with: ["space_id", "user_id"]).run()
        try await openCounter(of: userID, on: sql)
    }

    /// The refusal of a space someone is not in, or that does not exist: the same words, so that a guess learns nothing.
    static func notAMember(_ spaceID: String) -> Refusal {
        .notFound("You are not a member of space \(spaceID.prefix(128))")
    }

    private static func value<Value: RawRepresentable>(_ row: any SQLRow, _ column: String) throws -> Value where Value.RawValue == String {
        let raw = try row.decode(column: column, as: String.self)
        guard let value = Value(rawValue: raw) else { throw StorageError.corrupt("\(column) '\(raw)' is not a \(Value.self)") }
        return value
    }
}
