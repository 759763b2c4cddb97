import EventualAPI
import EventualStorage
import Foundation
import SQLKit

/// Classified scans and the points they earned.
///
/// A scan is stored once per (user, scan id): the first result is the answer for ever, and a
/// replay, even one racing the first request, awards nothing twice. The user's row in
/// `recycling_scores` is locked first in every scan's transaction, so that one user's scans are
/// scored one at a time and the daily cap holds under concurrency on PostgreSQL too (SQLite
/// runs one write transaction at a time anyway).
///
/// The cap counts a rolling 24 hours of `takenAt`, not a calendar day: a day in the time zone a
/// request names would move with the name (the same instant sent as `Etc/GMT+12`, then as
/// `Pacific/Kiritimati`, would fall on three days and earn three times).
struct ScanStore: Sendable {
    static let pointsPerScan = 50
    static let dailyCap = 20
    static let capWindow: Int64 = 24 * 3600 * 1000

    let database: Database

    /// What a scan was found to be, before it is scored.
    struct Classification: Sendable {
        var detected: Bool
        var trashType: TrashType?
        var parts: [PackagingPart]?
        var specialPoint: Components.Schemas.RecyclingPoint?
        var source: Components.Schemas.ScanResult.SourcePayload
        var message: String
        /// The knowledge base's name for the scanned barcode, if it knows one.
        var productName: String? = nil
    }

    /// A scan as sent, with its local day worked out.
    struct Scan: Sendable {
        let userID: String
        let id: String
        let takenAt: Int64
        let timeZone: String
        let localDay: LocalDay
        let barcode: String?
    }

    /// The stored result of a scan id, if it was classified before.
    func stored(userID: String, scanID: String) async throws -> Components.Schemas.ScanResult? {
        try await database.withConnection { sql in try await Self.stored(userID: userID, scanID: scanID, on: sql) }
    }

    private static func stored(userID: String, scanID: String, on sql: any SQLDatabase) async throws -> Components.Schemas.ScanResult? {
        guard let row = try await sql.select().column("result").from("recycling_scans")
            .where("user_id", .equal, userID).where("scan_id", .equal, scanID).first() else { return nil }
        do {
            return try JSONDecoder().decode(Components.Schemas.ScanResult.self, from: Data(try row.decode(column: "result", as: String.self).utf8))
        } catch {
            throw StorageError.corrupt("a stored scan result that is not ScanResult JSON")
        }
    }

    /// Scores and stores a classified scan, or returns the result stored first for its id.
    func record(_ scan: Scan, _ classification: Classification) async throws -> Components.Schemas.ScanResult {
        do {
            return try await database.transaction { sql in
                try await Self.lockScore(of: scan.userID, on: sql)
                if let first = try await Self.stored(userID: scan.userID, scanID: scan.id, on: sql) { return first }
                let bin = classification.detected ? classification.trashType?.bin : nil
                var points = 0
                if bin != nil {
                    let awarded = try await sql.select().column("taken_at").from("recycling_scans")
                        .where("user_id", .equal, scan.userID).where("points", .greaterThan, 0)
                        .where("taken_at", .greaterThan, scan.takenAt - Self.capWindow)
                        .where("taken_at", .lessThan, scan.takenAt + Self.capWindow)
                        .all().map { try $0.decode(column: "taken_at", as: Int64.self) }
                    points = Self.capAllows(awarded, adding: scan.takenAt) ? Self.pointsPerScan : 0
                }
                var message = classification.message
                if bin != nil && points == 0 {
                    message += " No points this time: \(Self.dailyCap) scans a day earn points (in any 24 hours), and those are used up."
                }
                let result = Components.Schemas.ScanResult(
                    id: scan.id, detected: classification.detected,
                    trashType: classification.trashType.flatMap { Components.Schemas.TrashType(rawValue: $0.rawValue) },
                    bin: bin.flatMap { Components.Schemas.BinColour(rawValue: $0.colour) },
                    binLabel: bin?.label, specialPoint: classification.specialPoint,
                    parts: classification.parts?.map(Components.Schemas.PackagingPart.scanned), productName: classification.productName,
                    points: points, source: classification.source, message: message
                )
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                let json = String(decoding: try encoder.encode(result), as: UTF8.self)
                try await sql.insert(into: "recycling_scans")
                    .columns("user_id", "scan_id", "taken_at", "time_zone", "local_day", "barcode", "detected", "trash_type", "bin",
                             "points", "source", "message", "special_point_id", "result", "created_at")
                    .values(SQLBind(scan.userID), SQLBind(scan.id), SQLBind(scan.takenAt), SQLBind(scan.timeZone),
                            SQLBind(scan.localDay.text), SQLBind(scan.barcode), SQLBind(classification.detected ? 1 : 0),
                            SQLBind(classification.trashType?.rawValue), SQLBind(bin?.colour), SQLBind(points),
                            SQLBind(classification.source.rawValue), SQLBind(message), SQLBind(classification.specialPoint?.id),
                            SQLBind(json), SQLBind(UnixMillis.now()))
                    .run()
                if points > 0 {
                    try await sql.update("recycling_scores")
                        .set(SQLIdentifier("total"), to: SQLBinaryExpression(SQLIdentifier("total"), .add, SQLBind(points)))
                        .where("user_id", .equal, scan.userID).run()
                }
                return result
            }
        } catch let error as Refusal {
            throw error
        } catch {
            // NB: the primary key (user, scan id) has the last word: if a racing replay got its row
            // in first (it cannot while the score row is locked, but a unique key is the guarantee),
            // this one answers the stored result.
            guard let first = try? await stored(userID: scan.userID, scanID: scan.id) else { throw error }
            return first
        }
    }

    /// Whether a scan at `instant` may earn points beside the awarded scans at `awarded`: no 24
    /// hours may hold more than `dailyCap` of them. NB: scans arrive in any order (a device
    /// offline for days sends them late), so every window that would hold `instant` is checked,
    /// not only the 24 hours before it.
    static func capAllows(_ awarded: [Int64], adding instant: Int64) -> Bool {
        let times = (awarded + [instant]).sorted()
        for start in times where start > instant - capWindow && start <= instant {
            let inWindow = times.count { $0 >= start && $0 < start + capWindow }
            if inWindow > dailyCap { return false }
        }
        return true
    }

    /// Scans that earned points in the 24 hours up to `now`: what the cap sees for a scan made now.
    func awardedInLastDay(of userID: String, now: Int64) async throws -> Int {
        try await database.withConnection { sql in
            try await sql.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("recycling_scans")
                .where("user_id", .equal, userID).where("points", .greaterThan, 0)
                .where("taken_at", .greaterThan, now - Self.capWindow).where("taken_at", .lessThanOrEqual, now)
                .first()?.decode(column: "n", as: Int.self) ?? 0
        }
    }

    /// Makes sure the user has a score row and locks it until the transaction ends.
    private static func lockScore(of userID: String, on sql: any SQLDatabase) async throws {
        try await sql.insert(into: "recycling_scores").columns("user_id", "total").values(SQLBind(userID), SQLBind(Int64(0)))
            .ignoringConflicts(with: ["user_id"]).run()
        try await sql.update("recycling_scores").set(SQLIdentifier("total"), to: SQLIdentifier("total"))
            .where("user_id", .equal, userID).run()
    }

    // MARK: Score

    /// Points and awarded scans per stored local day.
    func days(of userID: String) async throws -> [String: (points: Int, awarded: Int)] {
        try await database.withConnection { sql in
            let rows = try await sql.select()
                .column("local_day")
                .column(SQLFunction("SUM", args: SQLIdentifier("points")), as: "points")
                .column(SQLFunction("COUNT", args: SQLLiteral.all), as: "awarded")
                .from("recycling_scans")
                .where("user_id", .equal, userID).where("points", .greaterThan, 0)
                .groupBy("local_day").all()
            var days: [String: (points: Int, awarded: Int)] = [:]
            for row in rows {
                days[try row.decode(column: "local_day", as: String.self)] =
                    (Int(try row.decode(column: "points", as: Int64.self)), try row.decode(column: "awarded", as: Int.self))
            }
            return days
        }
    }

    /// The `limit` users with the most points, highest first, ties by username.
    func scoreboard(limit: Int) async throws -> [(username: String, total: Int64)] {
        try await database.withConnection { sql in
            // NB: ties are ordered here, not in SQL: PostgreSQL sorts text by its locale and SQLite
            // by bytes. All users tied with the last place are read, then cut after sorting.
            let nth = try await sql.select().column("total").from("recycling_scores")
                .where("total", .greaterThan, 0).orderBy("total", .descending).limit(1).offset(limit - 1).first()?
                .decode(column: "total", as: Int64.self)
            // Fewer than `limit` users with points: all of them.
            let threshold = nth ?? 1
            let rows = try await sql.select().column(SQLColumn("username", table: "u")).column(SQLColumn("total", table: "s"))
                .from(SQLAlias(SQLIdentifier("recycling_scores"), as: SQLIdentifier("s")))
                .join(SQLAlias(SQLIdentifier("users"), as: SQLIdentifier("u")), on: SQLColumn("id", table: "u"), .equal, SQLColumn("user_id", table: "s"))
                .where(SQLColumn("total", table: "s"), .greaterThanOrEqual, SQLBind(threshold)).all()
            let entries = try rows.map { (try $0.decode(column: "username", as: String.self), try $0.decode(column: "total", as: Int64.self)) }
            return Array(entries.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }
                .prefix(limit).map { (username: $0.0, total: $0.1) })
        }
    }
}
