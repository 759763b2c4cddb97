import EventualAPI
import EventualStorage
import SQLKit

/// The pull: pages of what changed in a person's spaces after a cursor, and records asked for by id.
extension SyncStore {
    /// The records of every space `userID` is a member of changed after `cursor`, space by space
    /// (the personal one first, then by id), oldest change first in each, at most `limit` in all;
    /// only those `subscription` takes (nil: every collection). A nil `cursor` is a first pull:
    /// no deleted record is sent (see `SyncCursor`). `counting` adds how many records remain after
    /// the page. A cursor older than the deletions the server still keeps is refused
    /// (`Refusal.gone`): the device must start over.
    ///
    /// `seen` are the tags of the commits the device heard of last (`SyncHistory`): when the
    /// history lost one, the server went back in time since (a backup restored), and the page
    /// says so in `rewound`, with no record: pulling on from the cursor would skip the seqs the
    /// restored server hands out again.
    func pull(userID: String, after cursor: SyncCursor?, limit: Int, subscription: PullSubscription? = nil,
              counting: Bool = false, seen: [String] = []) async throws -> SyncPage {
        try await database.withConnection { sql in
            let spaces = try await SpaceGate.memberships(of: userID, on: sql)
            let rewound = seen.isEmpty ? [] : try await SpaceGate.unknownTags(seen, on: sql)
            guard rewound.isEmpty else {
                return SyncPage(records: [], cursor: cursor ?? SyncCursor(), hasMore: false, spaces: spaces, removed: [],
                                heads: try await SpaceGate.heads(of: spaces.map(\.id), on: sql), rewound: rewound)
            }
            let isPostgres = sql.dialect.name == "postgresql"
            let removed = try await Self.spacesLeft(by: userID, since: cursor, memberOf: spaces, on: sql)
            let from = try await Self.startingPoints(of: cursor, in: spaces, on: sql)
            var next = from
            var records: [SyncedRecord] = []
            var hasMore = false
            for (index, space) in spaces.enumerated() {
                let room = limit - records.count
                guard room > 0 else {
                    hasMore = try await anyChange(in: spaces[index...].map(\.id), after: from, subscription, isPostgres: isPostgres, on: sql)
                    break
                }
                let page = try await changes(in: space.id, after: from, subscription, isPostgres: isPostgres, limit: room + 1, on: sql)
                records += page.prefix(room)
                if let last = page.prefix(room).last { next.set(last.seq, for: space.id) }
                if page.count > room {
                    hasMore = true
                    break
                }
            }
            // NB: read after the records: a purge that removed a deletion this page would have
            // sent has committed by now, and is seen here.
            try await refuseIfExpired(cursor?.keeping(only: Set(spaces.map(\.id))) ?? SyncCursor(), spaces: spaces.map(\.id), on: sql)
            var remaining: Int?
            if counting {
                remaining = hasMore ? try await count(in: spaces.map(\.id), after: next, subscription, isPostgres: isPostgres, on: sql) : 0
            }
            // NB: read after the records, so that each head is at or past every seq the page holds.
            let heads = try await SpaceGate.heads(of: spaces.map(\.id), on: sql)
            // NB: who is in each space travels with every page, so that each device of each member names the same people.
            let members = try await SpaceStore.members(of: spaces.filter { $0.kind == .shared }.map(\.id), on: sql)
            return SyncPage(records: records, cursor: next, hasMore: hasMore,
                            spaces: spaces.map { space in members[space.id].map(space.with(members:)) ?? space }, removed: removed,
                            remaining: remaining, heads: heads)
        }
    }

    /// The spaces a pull tells the device the person is no longer in: those `cursor` holds.
    /// NB: a pull from nothing holds no space, yet its device may hold records it wrote offline to
    /// a space the person has left since: every space they left is said.
    private static func spacesLeft(by userID: String, since cursor: SyncCursor?, memberOf spaces: [SpaceSummary],
                                   on sql: any SQLDatabase) async throws -> [SpaceRef] {
        let current = Set(spaces.map(\.id))
        if cursor?.isEmpty ?? true {
            return try await SpaceGate.formerSpaces(of: userID, on: sql).filter { !current.contains($0.id) }
        }
        guard let cursor, cursor.keeping(only: current) != cursor else { return [] }
        return try await SpaceGate.formerSpaces(of: userID, on: sql).filter { !current.contains($0.id) && cursor.holds($0.id) }
    }

    /// Where a pull from `cursor` starts in each space: where the cursor stands, or, in a space it
    /// does not hold, from the beginning (a first pull notes the space's head: see `SyncCursor`).
    private static func startingPoints(of cursor: SyncCursor?, in spaces: [SpaceSummary], on sql: any SQLDatabase) async throws
        -> SyncCursor
    {
        var from = cursor?.keeping(only: Set(spaces.map(\.id))) ?? SyncCursor()
        let heads = cursor == nil ? try await SpaceGate.lastSeqs(of: spaces.map(\.id), on: sql) : [:]
        for space in spaces where !from.holds(space.id) {
            if cursor == nil { from.startFresh(space.id, head: heads[space.id] ?? 0) } else { from.set(0, for: space.id) }
        }
        return from
    }

    /// The condition on `r` of a space's records a pull from `cursor` sends.
    private static func pulled(in spaceID: String, after cursor: SyncCursor, _ subscription: PullSubscription?,
                               isPostgres: Bool) -> SQLQueryString {
        var condition: SQLQueryString = "r.space_id = \(bind: spaceID) AND r.seq > \(bind: cursor.position(of: spaceID))"
        if let head = cursor.head(of: spaceID) {
            // NB: `deleted` is NULL for a row the server has not classified yet (written before
            // migration 12, until housekeeping settles it): sent, as a live record would be.
            condition += " AND NOT (r.deleted = 1 AND r.seq <= \(bind: head))"
        }
        if let subscription { condition += " AND " + subscription.condition(isPostgres: isPostgres) }
        return condition
    }

    /// The records `recordIDs` of `collection` in the space as they stand, deleted ones too, in the
    /// order asked (those that do not exist left out), for a member of the space (else
    /// `SpaceGate.notAMember`; a personal space not made yet holds nothing).
    func records(_ recordIDs: [String], of collection: String, in spaceID: String, for userID: String) async throws -> [SyncedRecord] {
        try await database.withConnection { sql in
            guard try await SpaceGate.role(of: userID, in: spaceID, on: sql) != nil else {
                if spaceID == userID { return [] }
                throw SpaceGate.notAMember(spaceID)
            }
            let rows = try await sql.raw("""
                SELECT r.collection, r.record_id, r.fields, r.field_stamps, r.counter_deltas, r.tombstone, r.seq, r.deleted,
                       u.username AS changed_by_name
                FROM sync_records r LEFT JOIN users u ON u.id = r.changed_by
                WHERE r.space_id = \(bind: spaceID) AND r.collection = \(bind: collection)
                  AND r.record_id IN (\(binds: Array(Set(recordIDs))))
                """).all()
            let found = try rows.map { row in
                try SyncedRecord(space: spaceID, collection: collection, recordID: try row.decode(column: "record_id", as: String.self),
                                 pulled: try SyncRecordRows.columns(of: row), deleted: try row.decode(column: "deleted", as: Int?.self),
                                 seq: try row.decode(column: "seq", as: Int64.self),
                                 changedBy: try row.decode(column: "changed_by_name", as: String?.self))
            }
            let byID = Dictionary(found.map { ($0.recordID, $0) }) { first, _ in first }
            var seen = Set<String>()
            return recordIDs.compactMap { id in seen.insert(id).inserted ? byID[id] : nil }
        }
    }

    /// One space's records a pull from `cursor` sends, oldest change first, at most `limit`.
    private func changes(in spaceID: String, after cursor: SyncCursor, _ subscription: PullSubscription?, isPostgres: Bool,
                         limit: Int, on sql: any SQLDatabase) async throws -> [SyncedRecord] {
        let condition = Self.pulled(in: spaceID, after: cursor, subscription, isPostgres: isPostgres)
        let rows = try await sql.raw("""
            SELECT r.collection, r.record_id, r.fields, r.field_stamps, r.counter_deltas, r.tombstone, r.seq, r.deleted,
                   u.username AS changed_by_name
            FROM sync_records r LEFT JOIN users u ON u.id = r.changed_by
            WHERE \(condition)
            ORDER BY r.seq LIMIT \(literal: limit)
            """).all()
        return try rows.map { row in
            try SyncedRecord(space: spaceID, collection: try row.decode(column: "collection", as: String.self),
                             recordID: try row.decode(column: "record_id", as: String.self),
                             pulled: try SyncRecordRows.columns(of: row), deleted: try row.decode(column: "deleted", as: Int?.self),
                             seq: try row.decode(column: "seq", as: Int64.self),
                             changedBy: try row.decode(column: "changed_by_name", as: String?.self))
        }
    }

    /// Whether any of the spaces has a record a pull from `cursor` would send.
    private func anyChange(in spaceIDs: [String], after cursor: SyncCursor, _ subscription: PullSubscription?, isPostgres: Bool,
                           on sql: any SQLDatabase) async throws -> Bool {
        for spaceID in spaceIDs {
            let condition = Self.pulled(in: spaceID, after: cursor, subscription, isPostgres: isPostgres)
            if try await sql.raw("SELECT r.seq FROM sync_records r WHERE \(condition) LIMIT 1").first() != nil { return true }
        }
        return false
    }

    /// How many records pulls from `cursor` have still to send, over the spaces.
    private func count(in spaceIDs: [String], after cursor: SyncCursor, _ subscription: PullSubscription?, isPostgres: Bool,
                       on sql: any SQLDatabase) async throws -> Int {
        var total = 0
        for spaceID in spaceIDs {
            let condition = Self.pulled(in: spaceID, after: cursor, subscription, isPostgres: isPostgres)
            total += try await sql.raw("SELECT COUNT(*) AS remaining FROM sync_records r WHERE \(condition)").first()?
                .decode(column: "remaining", as: Int.self) ?? 0
        }
        return total
    }

    /// Refuses a cursor that missed a deletion the server no longer keeps: in a space it holds,
    /// deletions were purged above both its position and its first pull's head.
    private func refuseIfExpired(_ cursor: SyncCursor, spaces: [String], on sql: any SQLDatabase) async throws {
        let held = spaces.filter(cursor.holds)
        guard !held.isEmpty else { return }
        for (spaceID, purged) in try await SpaceGate.purgedThrough(held, on: sql)
        where purged > max(cursor.position(of: spaceID), cursor.head(of: spaceID) ?? 0) {
            throw Refusal.gone("This device last synced before the oldest deletion the server still keeps: start over from a"
                + " first sync (changes waiting on the device are kept and sent)")
        }
    }
}
