import EventualAPI
import Foundation
import GRDB

/// What this device heard of the server's history (`SyncHistory`), and the server's state of
/// every record it holds or saw deleted: what it takes to notice that the server went back in
/// time (a backup restored) and to send back, stamp by stamp, what the server lost.
///
/// - `eventual_server_heads`: per space (the server's id), the newest commit this device heard
///   of, from a pull's or a push's `heads`. Their tags go with each pull (`seen`).
/// - `eventual_record_states`: per record, the server's fields and merge state as last pulled
///   (`MergeState`), and this device's own changes the server acknowledged since, which that
///   state does not hold yet. Sent back, they merge into the restored server by their own
///   stamps: sending them twice, or from two devices, ends the same, a counter's deltas count
///   once, and a change made on the restored server after them wins.
enum ServerHistory {
    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("eventual-engine-11-server-history") { db in
            try db.execute(sql: """
                CREATE TABLE eventual_server_heads (
                    space TEXT PRIMARY KEY NOT NULL,
                    seq INTEGER NOT NULL,
                    tag TEXT NOT NULL
                ) STRICT;
                CREATE TABLE eventual_record_states (
                    collection TEXT NOT NULL,
                    record_id TEXT NOT NULL,
                    space TEXT,
                    deleted INTEGER NOT NULL DEFAULT 0,
                    fields TEXT NOT NULL DEFAULT '{}',
                    state TEXT,
                    acknowledged TEXT,
                    PRIMARY KEY (collection, record_id)
                ) STRICT;
                CREATE INDEX eventual_record_states_by_space ON eventual_record_states (space);
                """)
        }
    }

    // MARK: - Heads

    /// Keeps the newest of `heads` per space. NB: never an older one: a page read before a push
    /// committed may arrive after the push's answer.
    static func remember(_ heads: [SyncHead], _ db: Database) throws {
        for head in heads where SyncHistory.isTag(head.tag) {
            try db.cachedStatement(sql: """
                INSERT INTO eventual_server_heads (space, seq, tag) VALUES (?, ?, ?)
                ON CONFLICT (space) DO UPDATE SET seq = excluded.seq, tag = excluded.tag WHERE excluded.seq >= eventual_server_heads.seq
                """).execute(arguments: [head.space, head.seq, head.tag])
        }
    }

    /// The tags a pull names in `seen`.
    static func seenTags(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT tag FROM eventual_server_heads ORDER BY space")
    }

    /// The spaces (the server's ids) whose newest commit heard of has one of `tags`.
    static func spaces(heardAs tags: [String], _ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT space FROM eventual_server_heads WHERE tag IN (\(OutboxTable.placeholders(tags.count)))",
                            arguments: StatementArguments(tags))
    }

    /// Forgets what was heard of `space` (nil: of every space), and with `stamps` the stamps of its records too.
    static func forget(space: String?, stamps: Bool, _ db: Database) throws {
        guard let space else { return try db.execute(sql: "DELETE FROM eventual_server_heads") }
        try db.execute(sql: "DELETE FROM eventual_server_heads WHERE space = ?", arguments: [space])
        if stamps { try db.execute(sql: "DELETE FROM eventual_record_states WHERE space IS ?", arguments: [space]) }
    }

    // MARK: - Records

    /// Keeps the server's state of each pulled record (nil space: the person's own), and forgets
    /// the acknowledged changes of this device that it holds now. NB: a deletion in another space
    /// (a record moved away from it) never replaces the record where it lives now.
    static func note(_ records: [RemoteRecord], _ db: Database) throws {
        for record in records {
            guard let text = record.state, let state = MergeState(text: text) else { continue }
            let kept = try acknowledged(record.collection, record.recordID, db).filter { change in
                guard let stamp = HLCStamp(parsing: change.hlc) else { return false }
                return !state.holds(stamp: stamp, fields: change.fields.keys, deltas: (change.deltas ?? [:]).keys, deleted: change.deleted)
            }
            try db.cachedStatement(sql: """
                INSERT INTO eventual_record_states (collection, record_id, space, deleted, fields, state, acknowledged)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (collection, record_id) DO UPDATE SET space = excluded.space, deleted = excluded.deleted,
                    fields = excluded.fields, state = excluded.state, acknowledged = excluded.acknowledged
                WHERE excluded.deleted = 0 OR excluded.space IS eventual_record_states.space
                """).execute(arguments: [record.collection, record.recordID, record.space, record.deleted,
                                         WireJSON.object(record.fields), text, try encoded(kept)])
        }
    }

    /// Keeps this device's own changes the server acknowledged, until a pull brings a state that holds them.
    static func noteAcknowledged(_ entries: [OutboxEntry], _ db: Database) throws {
        for entry in entries where entry.kind == .change {
            guard let recordID = entry.recordID, let change = try? JSONDecoder().decode(ChangePayload.self, from: entry.payload),
                  change.restores != true
            else { continue }
            let kept = try acknowledged(entry.operation, recordID, db) + [change]
            try db.cachedStatement(sql: """
                INSERT INTO eventual_record_states (collection, record_id, space, deleted, acknowledged) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (collection, record_id) DO UPDATE SET acknowledged = excluded.acknowledged
                """).execute(arguments: [entry.operation, recordID, entry.space, change.deleted, try encoded(kept)])
        }
    }

    private static func acknowledged(_ collection: String, _ recordID: String, _ db: Database) throws -> [ChangePayload] {
        guard let text = try String.fetchOne(db.cachedStatement(sql: """
            SELECT acknowledged FROM eventual_record_states WHERE collection = ? AND record_id = ?
            """), arguments: [collection, recordID]) else { return [] }
        return (try? JSONDecoder().decode([ChangePayload].self, from: Data(text.utf8))) ?? []
    }

    private static func encoded(_ changes: [ChangePayload]) throws -> String? {
        changes.isEmpty ? nil : String(decoding: try JSONEncoder.sorted.encode(changes), as: UTF8.self)
    }

    // MARK: - Sending back

    /// Queues ahead of everything waiting, for each of `spaces` (the server's ids), every record of it whose server state this
    /// device keeps, with that state (`restores`), and its own acknowledged changes the state does
    /// not hold yet, as they were sent; returns how many entries. A record the device holds with
    /// no state and nothing waiting (held from before states were kept) goes with the oldest stamp,
    /// so that it fills in only what the server no longer has. Referenced collections go first,
    /// so that a rule's lookup finds them.
    static func sendBack(_ spaces: [String], mirrors: [String: any SyncedCollectionStore], node: String, _ db: Database) throws -> Int {
        let oldest = HLCStamp(millis: 0, counter: 0, node: node)
        var queued: [(operation: String, recordID: String, space: String?, payload: Data)] = []
        func queue(_ collection: SyncCollection, _ recordID: String, _ payload: ChangePayload, space: String?, _ db: Database) throws {
            queued.append((collection.name, recordID, space, try JSONEncoder.sorted.encode(payload)))
        }
        for space in spaces {
            let local: String? = try SpaceTable.isPersonal(space, db) ? nil : space
            for mirror in ordered(mirrors) {
                let collection = mirror.collection
                let rows = try Row.fetchAll(db, sql: """
                    SELECT record_id, fields, state, acknowledged FROM eventual_record_states WHERE collection = ? AND space IS ? ORDER BY record_id
                    """, arguments: [collection.name, local])
                var known = Set<String>()
                for row in rows {
                    let recordID: String = row["record_id"]
                    known.insert(recordID)
                    if let text = row["state"] as String?, let state = MergeState(text: text) {
                        let fields = (try? JSONDecoder().decode([String: SyncValue].self, from: Data((row["fields"] as String).utf8))) ?? [:]
                        try queue(collection, recordID, ChangePayload(hlc: (state.newestStamp ?? oldest).description,
                                                                      fields: fields.filter { collection.fields[$0.key] != nil },
                                                                      deltas: nil, deleted: false, restores: true, state: text),
                                  space: local, db)
                    }
                    for change in (row["acknowledged"] as String?).flatMap({ try? JSONDecoder().decode([ChangePayload].self, from: Data($0.utf8)) }) ?? [] {
                        try queue(collection, recordID, change, space: local, db)
                    }
                }
                for held in try mirror.heldRecords(inSpace: local, in: db) where !known.contains(held.id) {
                    let waits = try Bool.fetchOne(db, sql: """
                        SELECT EXISTS (SELECT 1 FROM eventual_outbox WHERE kind = 'change' AND operation = ? AND record_id = ?)
                        """, arguments: [collection.name, held.id]) ?? false
                    guard !waits else { continue }
                    let fields = held.fields.filter { !$0.value.isNull }
                    let state = MergeState(stamps: fields.mapValues { _ in oldest })
                    try queue(collection, held.id, ChangePayload(hlc: oldest.description, fields: fields, deltas: nil, deleted: false,
                                                                 restores: true, state: state.text), space: local, db)
                }
            }
        }
        // NB: ahead of everything waiting: a change made since to one of these records is newer, and
        // one the restored server refused for a record it lost goes again once the record is back.
        try OutboxTable.prepend(changes: queued, db: db)
        return queued.count
    }
    /// The mirrors, a collection that another refers to before the one that refers to it.
    private static func ordered(_ mirrors: [String: any SyncedCollectionStore]) -> [any SyncedCollectionStore] {
        var placed: [String] = []
        func place(_ name: String, _ visiting: Set<String>) {
            guard !placed.contains(name), !visiting.contains(name), let mirror = mirrors[name] else { return }
            for case .refersTo(_, let target, _) in mirror.collection.rules { place(target, visiting.union([name])) }
            placed.append(name)
        }
        for name in mirrors.keys.sorted() { place(name, []) }
        return placed.compactMap { mirrors[$0] }
    }
}
