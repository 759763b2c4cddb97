import EventualAPI
import EventualKit
import Foundation
import GRDB

/// The scans on this device, and the notice of results that came in while the person was away.
struct ScanStore: Sendable {
    let store: LocalStore

    /// Every scan, newest first, with the failure reason of those the server refused.
    func all(limit: Int = .max) throws -> [Scan] {
        try store.reader.read { db in try Self.all(limit: limit, db) }
    }

    /// The same, read in `db`: the scans' table and the outbox's refusals, as one live query watches them.
    static func all(limit: Int = .max, _ db: Database) throws -> [Scan] {
        let failures = try failures(db)
        return try Row.fetchAll(db, sql: "SELECT * FROM scans ORDER BY taken_at DESC, id DESC LIMIT ?", arguments: [limit])
            .map { Scan(row: $0, failure: failures[$0["outbox_id"] as String]) }
    }

    func scan(id: String) throws -> Scan? {
        try store.reader.read { db in
            let failures = try Self.failures(db)
            return try Row.fetchOne(db, sql: "SELECT * FROM scans WHERE id = ?", arguments: [id])
                .map { Scan(row: $0, failure: failures[$0["outbox_id"] as String]) }
        }
    }

    /// Scans the server answered since the person was last told, marked as told: those it named
    /// a bin for, and those it could not (nothing seen in the photo, a packaging not known yet).
    func takeAnnouncements() async throws -> AnsweredWhileAway {
        try await store.write { tx in
            let row = try Row.fetchOne(tx.db, sql: """
                SELECT COALESCE(SUM(detected = 1 AND bin IS NOT NULL), 0) AS classified, COUNT(*) AS answered
                FROM scans WHERE announced = 0
                """)
            let classified: Int = row?["classified"] ?? 0, answered: Int = row?["answered"] ?? 0
            if answered > 0 { try tx.db.execute(sql: "UPDATE scans SET announced = 1 WHERE announced = 0") }
            return AnsweredWhileAway(classified: classified, unclassified: answered - classified)
        }
    }

    func markAnnounced(_ id: String) async throws {
        try await store.write { tx in try tx.db.execute(sql: "UPDATE scans SET announced = 1 WHERE id = ?", arguments: [id]) }
    }

    /// Points of this device's classified scans taken since `start` (Unix milliseconds).
    func points(since start: Int64) throws -> Int {
        try store.reader.read { db in
            try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(points), 0) FROM scans WHERE answered_at IS NOT NULL AND taken_at >= ?",
                             arguments: [start]) ?? 0
        }
    }

    /// The days (in `timeZone`) on which this device's classified scans earned points.
    func daysWithPoints(in timeZone: TimeZone) throws -> Set<Int64> {
        let times = try store.reader.read { db in
            try Int64.fetchAll(db, sql: "SELECT taken_at FROM scans WHERE answered_at IS NOT NULL AND points > 0")
        }
        return Set(times.map { Streak.day(of: Date(timeIntervalSince1970: Double($0) / 1000), in: timeZone) })
    }

    static func insert(_ call: ScanCall, outboxID: String, guess: TrashType?, parts: [PackagingPart], _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO scans (id, taken_at, time_zone, barcode, photo_file, point_id, latitude, longitude, outbox_id, guess_trash_type, parts)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [call.scanId, call.takenAt, call.timeZone, call.barcode, call.photoFile, call.pointId,
                             call.latitude, call.longitude, outboxID, guess?.rawValue, try partsText(parts)])
    }

    /// Stores the server's answer, and the time the server scored the scan by (this device's own
    /// may have been wrong); the person is told of it by the next command (`announced` 0).
    static func record(_ result: Components.Schemas.ScanResult, scanID: String, takenAt: Int64, answeredAt: Int64, _ db: Database) throws {
        let special = result.specialPoint.map(RecyclingPoint.init)
        // NB: how far the point is from where the scan was taken, when it was taken somewhere.
        let taken = try Row.fetchOne(db, sql: "SELECT latitude, longitude FROM scans WHERE id = ?", arguments: [scanID])
        let meters: Double? = if let special, let latitude = taken?["latitude"] as Double?, let longitude = taken?["longitude"] as Double? {
            GeoPosition(latitude: latitude, longitude: longitude).distance(to: special.position)
        } else { nil }
        try db.execute(sql: """
            UPDATE scans SET taken_at = ?, detected = ?, trash_type = ?, bin = ?, bin_label = ?, special_point = ?, special_point_id = ?,
                special_point_meters = ?, points = ?, source = ?, message = ?, answered_at = ?, announced = 0, parts = ?, product_name = ?
            WHERE id = ?
            """, arguments: [takenAt, result.detected, result.trashType?.rawValue, result.bin?.rawValue, result.binLabel,
                             special?.title, special?.id, meters, result.points, result.source.rawValue,
                             result.message, answeredAt, try partsText((result.parts ?? []).compactMap(PackagingPart.init)), result.productName,
                             scanID])
    }

    /// Parts as the `parts` column keeps them: NULL for none.
    private static func partsText(_ parts: [PackagingPart]) throws -> String? {
        parts.isEmpty ? nil : String(decoding: try JSONEncoder.sortedKeys.encode(parts), as: UTF8.self)
    }

    /// The reasons of failed outbox entries, by entry id.
    private static func failures(_ db: Database) throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try Outbox.entries(state: .failed, db).map { ($0.id, $0.lastError ?? "refused by the server") })
    }
}
