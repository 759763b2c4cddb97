import GRDB

/// Gives back to the device's disk the pages its database no longer uses: those of sent changes,
/// of records removed, of pages pulled and replaced. SQLite keeps such pages for later writes, so
/// without this a device's database only grows, to the size of its busiest day offline.
///
/// A database this engine creates reclaims them incrementally (`auto_vacuum = INCREMENTAL`), a
/// few pages per transaction, so a write that waits waits for one short step at most. One made
/// before it (no auto vacuum) is rewritten whole once (`VACUUM`), when enough of it is free to be
/// worth the rewrite; from then on it reclaims incrementally too.
public enum Compaction {
    /// Pages freed in one transaction (about 1 MiB at SQLite's 4 KiB pages): a write that waits
    /// waits for one such step at most.
    static let pagesPerStep = 256
    /// Free pages left in place: the next writes reuse them, and reclaiming them is not worth a step.
    static let slackPages = 1024
    /// Steps in one compaction at most, so that the end of a sync round is not held up by a large
    /// reclaim: what remains goes at the next round.
    public static let stepsPerRound = 16
    /// A database without auto vacuum is rewritten once only when this many pages are free and
    /// they are at least a quarter of it: a rewrite copies the whole file.
    static let rewriteAtFreePages = 2048

    /// How the database reclaims space now (SQLite's `PRAGMA auto_vacuum`).
    enum Mode: Int {
        case none = 0, full = 1, incremental = 2
    }

    /// Sets incremental reclaiming on a database that has no page yet: SQLite takes the setting
    /// only then, or at a `VACUUM`.
    static func prepare(_ db: Database) throws {
        guard try Int.fetchOne(db, sql: "PRAGMA page_count") == 0 else { return }
        try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
    }

    /// What the database holds: its mode, its free pages and all its pages.
    static func state(_ db: Database) throws -> (mode: Mode, free: Int, pages: Int) {
        let mode = Mode(rawValue: try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") ?? 0) ?? .none
        return (mode, try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0, try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0)
    }

    /// Reclaims the free pages of `writer`'s database past the slack, in at most `maxSteps` steps;
    /// answers the pages given back.
    static func run(_ writer: any DatabaseWriter, maxSteps: Int) async throws -> Int {
        let before = try await writer.read { db in try state(db) }
        guard before.free > slackPages else { return 0 }
        switch before.mode {
        case .full:
            return 0
        case .none:
            guard before.free >= rewriteAtFreePages, before.free * 4 >= before.pages else { return 0 }
            // NB: the rewrite both applies the mode and reclaims every free page. It needs room for
            // a copy of the database: on a full disk it fails, and the database stays as it was.
            try await writer.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
                try db.execute(sql: "VACUUM")
            }
        case .incremental:
            var free = before.free
            // NB: a negative count is none, never a trap (`compact(maxSteps:)` is public).
            for _ in 0..<max(0, maxSteps) where free > slackPages {
                // NB: a transaction of its own per step: the writer takes waiting writes in between.
                let pages = min(pagesPerStep, free - slackPages)
                free = try await writer.writeWithoutTransaction { db in
                    try db.execute(sql: "PRAGMA incremental_vacuum(\(pages))")
                    return try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
                }
            }
        }
        // NB: a WAL database's file shrinks when its pages are checkpointed back into it.
        try? await writer.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        let after = try await writer.read { db in try state(db) }
        return max(0, before.pages - after.pages)
    }
}

extension LocalStore {
    /// Gives back to the disk the pages the database no longer uses, in at most `maxSteps` short
    /// transactions (`Compaction`); answers the pages given back. The sync engine calls it after
    /// each round that ended well; an app may call it at a quiet moment too.
    @discardableResult
    public func compact(maxSteps: Int = Compaction.stepsPerRound) async throws -> Int {
        try await Compaction.run(writer, maxSteps: maxSteps)
    }
}
