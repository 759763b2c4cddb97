import EventualAPI
import SQLKit

/// The bytes each user stores, counted as their rows change: a synced record's values, stamps
/// and tombstone, a created product's name, description and image, and the usage events filed
/// for them (see `AnalyticsStore.bytes`), in UTF-8.
///
/// The count lives in `storage_usage` and moves in the same transaction as the rows it counts,
/// so the byte quota costs one statement per write instead of a sum over everything the user has.
struct StorageUsage: Sendable {
    /// Adds `delta` bytes (negative when something shrank or went) to `userID`'s count. A write
    /// that grows the count past `quota` throws `Refusal.quotaExceeded`, rolling its transaction back; one that
    /// shrinks it always goes through, so a user over the quota can still delete.
    static func add(_ delta: Int64, for userID: String, quota: Int64, on sql: any SQLDatabase,
                    advice: String = "Delete records or products you no longer need, or send smaller images") async throws {
        guard delta != 0 else { return }
        let row = try await sql.insert(into: "storage_usage").columns("user_id", "bytes")
            .values(SQLBind(userID), SQLBind(delta))
            .onConflict(with: ["user_id"]) { update in
                update.set("bytes", to: SQLBinaryExpression(SQLColumn("bytes", table: "storage_usage"), .add, SQLExcludedColumn("bytes")))
            }
            .returning("bytes")
            .first()
        let stored = try row?.decode(column: "bytes", as: Int64.self) ?? delta
        guard delta < 0 || stored <= quota else {
            throw Refusal.quotaExceeded(refusal(storing: stored, quota: quota, advice: advice))
        }
    }

    /// What each of `userIDs` stores, their counts locked until the transaction ends: a write
    /// that decides change by change what fits (a push) decides on the count it will commit on.
    /// NB: in sorted order, so that two such writes never wait on each other in a circle; and taken
    /// after the spaces' locks (`SpaceGate.enter`), as every write that holds both takes them.
    static func locked(_ userIDs: Set<String>, on sql: any SQLDatabase) async throws -> [String: Int64] {
        var stored: [String: Int64] = [:]
        for userID in userIDs.sorted() {
            // NB: an upsert that changes nothing, for its row lock: `SELECT … FOR UPDATE` is not
            // SQLite's (whose writer holds the whole database already), and finds no row to lock
            // for someone who never stored a byte.
            let row = try await sql.insert(into: "storage_usage").columns("user_id", "bytes")
                .values(SQLBind(userID), SQLBind(Int64(0)))
                .onConflict(with: ["user_id"]) { update in
                    update.set("bytes", to: SQLColumn("bytes", table: "storage_usage"))
                }
                .returning("bytes")
                .first()
            stored[userID] = try row?.decode(column: "bytes", as: Int64.self) ?? 0
        }
        return stored
    }

    /// Why a write is refused that would store `total` bytes for `whom` ("you", "the owner of Home").
    static func refusal(storing total: Int64, quota: Int64, for whom: String = "you",
                        advice: String = "Delete records or products you no longer need, or send smaller images") -> String {
        "Quota reached: this would store \(ByteCount.text(total)) for \(whom), and at most \(ByteCount.text(quota)) are allowed. \(advice)"
    }

    /// The bytes a synced record's columns take.
    static func bytes(of columns: SyncRecordState.Columns) -> Int64 {
        Int64(columns.fields.utf8.count + columns.fieldStamps.utf8.count
            + (columns.counterDeltas?.utf8.count ?? 0) + (columns.tombstone?.utf8.count ?? 0))
    }

    /// The bytes a product's text and image take.
    static func bytes(of product: ProductRecord) -> Int64 {
        Int64(product.name.utf8.count + (product.description?.utf8.count ?? 0) + (product.img?.utf8.count ?? 0))
    }
}
