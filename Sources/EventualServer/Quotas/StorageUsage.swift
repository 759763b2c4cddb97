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
            throw Refusal.quotaExceeded("Quota reached: this would store \(megabytes(stored)) for you, and at most \(megabytes(quota)) are"
                + " allowed. \(advice)")
        }
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

    /// `bytes` in MiB with one decimal, rounded to nearest, for any `Int64` (a size from the wire
    /// may be anything): NB: whole MiB and the remainder apart, so that nothing overflows.
    static func megabytes(_ bytes: Int64) -> String {
        let mebibyte: Int64 = 1_048_576
        let sign = bytes < 0 ? "-" : ""
        let magnitude = bytes.magnitude
        var whole = magnitude / UInt64(mebibyte)
        var tenths = ((magnitude % UInt64(mebibyte)) * 10 + UInt64(mebibyte / 2)) / UInt64(mebibyte)
        if tenths == 10 { (whole, tenths) = (whole + 1, 0) }
        return "\(sign)\(whole).\(tenths) MiB"
    }
}
