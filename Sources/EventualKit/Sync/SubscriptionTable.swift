import EventualAPI
import Foundation
import GRDB

/// One subscription as the device keeps it: its pulls' `collection` values (a moving bound fixed
/// at its first pull), its cursor and its first sync's progress.
struct SubscriptionRow: Sendable, Equatable {
    let key: String
    let priority: Int
    let query: [String]
    var cursor: String?
    /// Its pulls from nothing leave deleted records out: the device held none of its records then.
    var fresh: Bool
    var received: Int
    var total: Int
    var complete: Bool
    var updatedAt: Int64

    /// The fields it back fills (`collection.field`), when it is a back fill of fields a new
    /// version added (`SubscriptionTable.queueFieldFills`): its pages hold only those, of the
    /// records that hold a value of one.
    var filledFields: [String] {
        guard SubscriptionTable.isBackFill(key), let at = key.firstIndex(of: "@") else { return [] }
        return key[key.index(key.startIndex, offsetBy: SubscriptionTable.backFillPrefix.count)..<at]
            .split(separator: ",").filter { $0.contains(".") }.map(String.init)
    }

    /// The `since` of its next pull: none for a first pull that may leave deleted records out,
    /// else an empty cursor (`s1`: every space from its beginning, deletions too).
    var since: String? { cursor ?? (fresh ? nil : "s1") }
}

/// `eventual_subscriptions`: a row per subscription, written with the page it pulled.
enum SubscriptionTable {
    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("eventual-engine-5-subscriptions") { db in
            try db.execute(sql: """
                CREATE TABLE eventual_subscriptions (
                    key TEXT PRIMARY KEY NOT NULL,
                    priority INTEGER NOT NULL,
                    query TEXT NOT NULL,
                    cursor TEXT,
                    fresh INTEGER NOT NULL,
                    received INTEGER NOT NULL DEFAULT 0,
                    total INTEGER NOT NULL DEFAULT 0,
                    complete INTEGER NOT NULL DEFAULT 0,
                    updated_at INTEGER NOT NULL DEFAULT 0
                )
                """)
        }
    }

    /// The rows of `subscriptions`, by priority, made for those that have none: a device that
    /// synced before subscriptions goes on from its one cursor (it has every record up to it); a
    /// new one starts fresh when the device holds none of its collections' records. Rows of
    /// subscriptions the app no longer declares are dropped.
    ///
    /// `needsPreparing` tells, in a read, whether this has anything to write: the engine asks
    /// before each round's pull, and a round whose rows are all there takes no write transaction.
    static func needsPreparing(_ subscriptions: [SyncSubscription], db: Database) throws -> Bool {
        let keys = try Set(String.fetchAll(db, sql: "SELECT key FROM eventual_subscriptions").filter { !isBackFill($0) })
        return keys != Set(subscriptions.map(\.key))
    }

    // MARK: - A subscription that grew

    /// The key of a back fill: `backfill:` and the collections it pulls, then `@` and the key of
    /// the subscription that grew by them.
    static let backFillPrefix = "backfill:"

    static func isBackFill(_ key: String) -> Bool { key.hasPrefix(backFillPrefix) }

    /// The priority and the plain collections of a key (`p0:items,stores`), nil when a part has a slice.
    private static func plainParts(of key: String) -> (priority: Substring, parts: Set<String>)? {
        guard let colon = key.firstIndex(of: ":"), !key.contains("["), !isBackFill(key) else { return nil }
        return (key[..<colon], Set(key[key.index(after: colon)...].split(separator: ",").map(String.init)))
    }

    /// A new version of the app that adds collections to a subscription keeps its cursor for
    /// the ones it had, and pulls only the added ones from their beginning, in a back fill that
    /// goes when it is complete: none of the records it held comes again. Returns the rows made
    /// (the subscription's, then the back fill's), or nil when `subscription` did not grow from
    /// `old` (another priority, a part removed or sliced: it starts again).
    private static func grown(_ subscription: SyncSubscription, from old: SubscriptionRow, now: Int64,
                              mirrors: [String: any SyncedCollectionStore], db: Database) throws -> [SubscriptionRow]? {
        guard let before = plainParts(of: old.key), let after = plainParts(of: subscription.key), before.priority == after.priority,
              before.parts.isSubset(of: after.parts), before.parts != after.parts, old.cursor != nil else { return nil }
        let added = after.parts.subtracting(before.parts).sorted()
        let grown = SubscriptionRow(key: subscription.key, priority: subscription.priority, query: subscription.query(now: now),
                                cursor: old.cursor, fresh: old.fresh, received: old.received, total: old.total, complete: old.complete,
                                updatedAt: old.updatedAt)
        let holdsNothing = try added.allSatisfy { try !(mirrors[$0]?.hasRecords(in: db) ?? false) }
        let backFill = SubscriptionRow(key: backFillPrefix + added.joined(separator: ",") + "@" + subscription.key,
                                       priority: subscription.priority, query: added, cursor: nil, fresh: holdsNothing,
                                       received: 0, total: 0, complete: false, updatedAt: 0)
        return [grown, backFill]
    }

    /// Queues a back fill of `fields` (by collection) with the first subscription of each
    /// collection, in the caller's transaction: it pulls from the beginning only the records that
    /// hold a value of one (`filledFields`) and goes when it is complete, as a back fill of
    /// collections does; the subscription's cursor stays where it is.
    static func queueFieldFills(_ fields: [String: [String]], subscriptions: [SyncSubscription], db: Database) throws {
        var byTarget: [String: (subscription: SyncSubscription, fields: [String])] = [:]
        for (collection, names) in fields {
            guard let target = subscriptions.sorted(by: { ($0.priority, $0.key) < ($1.priority, $1.key) })
                .first(where: { $0.collections.contains(collection) }) else { continue }
            byTarget[target.key, default: (target, [])].fields += names.map { "\(collection).\($0)" }
        }
        for (key, fill) in byTarget {
            let fields = fill.fields.sorted()
            let collections = Array(Set(fields.map { String($0.prefix { $0 != "." }) })).sorted()
            try db.execute(sql: """
                INSERT OR IGNORE INTO eventual_subscriptions (key, priority, query, cursor, fresh, complete) VALUES (?, ?, ?, NULL, 1, 0)
                """, arguments: [backFillPrefix + fields.joined(separator: ",") + "@" + key, fill.subscription.priority,
                                 try encode(collections)])
        }
    }

    static func prepare(_ subscriptions: [SyncSubscription], mirrors: [String: any SyncedCollectionStore], now: Int64,
                        db: Database) throws -> [SubscriptionRow] {
        var rows = try all(db)
        let keys = Set(subscriptions.map(\.key))
        var dropped: [SubscriptionRow] = []
        var refills: [String: [String]] = [:]
        for (key, row) in rows where !keys.contains(key) && !(isBackFill(key) && keys.contains(backFillTarget(key))) {
            try db.execute(sql: "DELETE FROM eventual_subscriptions WHERE key = ?", arguments: [key])
            rows[key] = nil
            if !isBackFill(key) { dropped.append(row) }
            // NB: a back fill of fields whose subscription changed (a second upgrade before a sync)
            // is queued again with the subscriptions now, from the beginning: no field is left unfilled.
            for field in row.filledFields {
                let parts = field.split(separator: ".", maxSplits: 1).map(String.init)
                if parts.count == 2 { refills[parts[0], default: []].append(parts[1]) }
            }
        }
        if !refills.isEmpty {
            try queueFieldFills(refills, subscriptions: subscriptions, db: db)
            rows = try all(db)
        }
        let legacyCursor = try EngineSchema.value(.pullCursor, db)
        for subscription in subscriptions where rows[subscription.key] == nil {
            if let made = try dropped.lazy.compactMap({ try grown(subscription, from: $0, now: now, mirrors: mirrors, db: db) }).first {
                for row in made {
                    try db.execute(sql: """
                        INSERT INTO eventual_subscriptions (key, priority, query, cursor, fresh, received, total, complete, updated_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [row.key, row.priority, try encode(row.query), row.cursor, row.fresh, row.received, row.total,
                                         row.complete, row.updatedAt])
                    rows[row.key] = row
                }
                continue
            }
            let holdsNothing = try subscription.collections.allSatisfy { try !(mirrors[$0]?.hasRecords(in: db) ?? false) }
            let row = SubscriptionRow(key: subscription.key, priority: subscription.priority, query: subscription.query(now: now),
                                      cursor: legacyCursor, fresh: legacyCursor == nil && holdsNothing, received: 0, total: 0,
                                      complete: legacyCursor != nil, updatedAt: 0)
            try db.execute(sql: """
                INSERT INTO eventual_subscriptions (key, priority, query, cursor, fresh, complete) VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [row.key, row.priority, try encode(row.query), row.cursor, row.fresh, row.complete])
            rows[row.key] = row
        }
        return sorted(subscriptions, rows)
    }

    /// `rows` with `fresh` cleared where the device now holds a record of the subscription's
    /// collections though no page has come yet. NB: a record written on the device (offline)
    /// after the row was made may have been deleted on the server since, by another device; a
    /// pull that leaves deletions out would leave it here for good.
    static func checkingFreshness(_ rows: [SubscriptionRow], of subscriptions: [SyncSubscription],
                                  mirrors: [String: any SyncedCollectionStore], db: Database) throws -> [SubscriptionRow] {
        let byKey = Dictionary(subscriptions.map { ($0.key, $0) }) { first, _ in first }
        return try rows.map { row in
            guard row.cursor == nil, row.fresh, let subscription = byKey[row.key] else { return row }
            var checked = row
            checked.fresh = try subscription.collections.allSatisfy { try !(mirrors[$0]?.hasRecords(in: db) ?? false) }
            return checked
        }
    }

    /// The rows of `subscriptions`, by priority, when `needsPreparing` said there is nothing to make.
    static func rows(of subscriptions: [SyncSubscription], db: Database) throws -> [SubscriptionRow] {
        sorted(subscriptions, try all(db))
    }

    /// The rows of `subscriptions` and of their back fills, by priority (a back fill after its subscription).
    private static func sorted(_ subscriptions: [SyncSubscription], _ rows: [String: SubscriptionRow]) -> [SubscriptionRow] {
        let keys = Set(subscriptions.map(\.key))
        let backFills = rows.values.filter { isBackFill($0.key) && keys.contains(backFillTarget($0.key)) }
        return (subscriptions.compactMap { rows[$0.key] } + backFills).sorted { ($0.priority, $0.key) < ($1.priority, $1.key) }
    }

    /// The key of the subscription a back fill's key belongs to.
    private static func backFillTarget(_ key: String) -> String {
        key.firstIndex(of: "@").map { String(key[key.index(after: $0)...]) } ?? ""
    }

    /// Writes what a page moved: the cursor and the progress. A back fill that is complete goes:
    /// its subscription, whose cursor was ahead of it, carries its collections on.
    static func save(_ row: SubscriptionRow, db: Database) throws {
        if isBackFill(row.key) && row.complete {
            try db.execute(sql: "DELETE FROM eventual_subscriptions WHERE key = ?", arguments: [row.key])
            return
        }
        try db.execute(sql: """
            UPDATE eventual_subscriptions SET cursor = ?, received = ?, total = ?, complete = ?, updated_at = ? WHERE key = ?
            """, arguments: [row.cursor, row.received, row.total, row.complete, row.updatedAt, row.key])
    }

    /// Every subscription starts again from nothing (the server no longer keeps what the cursors
    /// missed); `fresh` when the device holds none of their records any more.
    static func startOver(fresh: Bool, db: Database) throws {
        try db.execute(sql: "UPDATE eventual_subscriptions SET cursor = NULL, fresh = ?, received = 0, total = 0, complete = 0, updated_at = 0",
                       arguments: [fresh])
        try EngineSchema.setValue(nil, for: .pullCursor, db)
    }

    /// The progress of each priority of `subscriptions` (a subscription without a row yet has not started).
    static func progress(of subscriptions: [SyncSubscription], db: Database) throws -> [PullProgress] {
        let rows = try all(db)
        // NB: a device that synced before subscriptions has had its first sync, rows or not yet.
        let syncedBefore = try EngineSchema.value(.pullCursor, db) != nil
        var byPriority: [Int: PullProgress] = [:]
        for subscription in subscriptions {
            let row = rows[subscription.key]
            guard row != nil || !syncedBefore else {
                byPriority[subscription.priority] = byPriority[subscription.priority] ?? PullProgress(priority: subscription.priority, isComplete: true)
                continue
            }
            var progress = byPriority[subscription.priority] ?? PullProgress(priority: subscription.priority, isComplete: true)
            progress.received += row?.received ?? 0
            progress.total += row?.total ?? 0
            progress.isComplete = progress.isComplete && (row?.complete ?? false)
            progress.updatedAt = max(progress.updatedAt, row?.updatedAt ?? 0)
            byPriority[subscription.priority] = progress
        }
        return byPriority.values.sorted { $0.priority < $1.priority }
    }

    private static func all(_ db: Database) throws -> [String: SubscriptionRow] {
        var rows: [String: SubscriptionRow] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT * FROM eventual_subscriptions") {
            let query = try JSONDecoder().decode([String].self, from: Data((row["query"] as String).utf8))
            rows[row["key"]] = SubscriptionRow(key: row["key"], priority: row["priority"], query: query, cursor: row["cursor"],
                                               fresh: row["fresh"], received: row["received"], total: row["total"],
                                               complete: row["complete"], updatedAt: row["updated_at"])
        }
        return rows
    }

    private static func encode(_ query: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(query), as: UTF8.self)
    }
}
