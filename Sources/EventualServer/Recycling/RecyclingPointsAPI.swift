import EventualAPI
import Foundation
import SQLKit
import Synchronization

extension APIService {
    static let defaultNearLimit = 20
    static let nearLimits = 1...1000
    static let maxIDLength = 128

    func getRecyclingPoints(_ input: Operations.GetRecyclingPoints.Input) async throws -> Operations.GetRecyclingPoints.Output {
        let store = recycling.points
        // NB: checked on every request, though only the whole set has an ETag to compare.
        try ETag.checkLength(input.headers.ifNoneMatch)
        guard let near = input.query.near else {
            guard input.query.limit == nil, input.query.material == nil else {
                throw APIError.badRequest("limit and material apply only with near=LAT,LON")
            }
            // NB: the ETag comes from two counters; a client that has the set gets its 304 before
            // any point is read.
            let versions = try await store.versions()
            let etag = "\"p\(versions.points)-v\(versions.visits)\""
            if try ETag.matches(input.headers.ifNoneMatch, etag) { return .notModified(.init()) }
            let list = try await recycling.wholeSet.list(etag: etag) {
                let snapshot = try await store.snapshot(atLeast: versions.points)
                let visits = try await store.allVisits()
                return Components.Schemas.RecyclingPointList(points: snapshot.points.map { $0.answer(visits: visits[$0.id] ?? 0) })
            }
            return .ok(.init(headers: .init(eTag: etag), body: .json(list)))
        }
        guard near.count <= 64, Self.isDecimalPair(near), let origin = GeoPosition(parsing: near) else {
            throw APIError.badRequest("near must be LAT,LON in decimal degrees, latitude -90 to 90 and longitude -180 to 180")
        }
        let limit = input.query.limit ?? Self.defaultNearLimit
        guard Self.nearLimits.contains(limit) else {
            throw APIError.badRequest("limit must be from \(Self.nearLimits.lowerBound) to \(Self.nearLimits.upperBound)")
        }
        let material = try input.query.material.map { value in
            guard let material = PointMaterial(rawValue: value.rawValue) else { throw APIError.badRequest("material is not known") }
            return material
        }
        let found = try await store.nearest(to: origin, limit: limit, material: material)
        return .ok(.init(body: .json(.init(points: found.map { $0.point.answer(visits: $0.visits, distance: $0.meters) }))))
    }

    func postRecyclingVisit(_ input: Operations.PostRecyclingVisit.Input) async throws -> Operations.PostRecyclingVisit.Output {
        guard case .json(let body) = input.body else { throw APIError.badRequest("expected a JSON body") }
        let pointID = input.path.id
        try Self.checkID(pointID, field: "id")
        try Self.checkID(body.visitId, field: "visitId")
        let userID = try await authenticatedUserID()
        let result = try await recycling.points.countVisit(pointID: pointID, visitID: body.visitId, userID: userID)
        return .ok(.init(body: .json(.init(pointId: pointID, visits: result.visits, counted: result.counted))))
    }

    /// "LAT,LON" exactly as the contract's pattern spells it: plain decimals, spaces around them.
    /// NB: Double() alone also takes "+1", "1.", "1e3" and "0x1p3", which the contract refuses.
    static func isDecimalPair(_ text: String) -> Bool {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        return parts.allSatisfy { part in
            var bytes = Array(part.utf8)
            while bytes.first == 0x20 { bytes.removeFirst() }
            while bytes.last == 0x20 { bytes.removeLast() }
            if bytes.first == UInt8(ascii: "-") { bytes.removeFirst() }
            let halves = bytes.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
            return halves.allSatisfy { !$0.isEmpty && $0.allSatisfy { (0x30...0x39).contains($0) } }
        }
    }

    /// A client-made identifier: 1 to 128 characters, no control character.
    static func checkID(_ value: String, field: String) throws(APIError) {
        try TextRules.check(value, field: field)
        guard (1...maxIDLength).contains(value.unicodeScalars.count) else {
            throw .badRequest("\(field) must be 1 to \(maxIDLength) characters long")
        }
    }
}

/// The last whole set of points answered, kept with its ETag: repeated downloads of an unchanged
/// set are encoded from memory instead of read again.
final class WholeSetCache: Sendable {
    private let held = Mutex<(etag: String, list: Components.Schemas.RecyclingPointList)?>(nil)

    func list(etag: String, build: () async throws -> Components.Schemas.RecyclingPointList) async throws
        -> Components.Schemas.RecyclingPointList {
        if let cached = held.withLock({ $0 }), cached.etag == etag { return cached.list }
        let list = try await build()
        held.withLock { $0 = (etag, list) }
        return list
    }
}

extension RecyclingPointStore {
    /// Counts a visit once per (user, visit id); a replay counts nothing. 404 for an unknown point.
    func countVisit(pointID: String, visitID: String, userID: String) async throws -> (visits: Int64, counted: Bool) {
        do {
            return try await database.transaction { sql in
                guard let visits = try await sql.select().column("visits").from("recycling_points").where("id", .equal, pointID).first()?
                    .decode(column: "visits", as: Int64.self)
                else { throw APIError.notFound("no recycling point with id \(pointID)") }
                let earlier = try await sql.select().column("point_id").from("recycling_visits")
                    .where("user_id", .equal, userID).where("visit_id", .equal, visitID).first()
                guard earlier == nil else { return (visits, false) }
                try await sql.insert(into: "recycling_visits").columns("user_id", "visit_id", "point_id", "visited_at")
                    .values(SQLBind(userID), SQLBind(visitID), SQLBind(pointID), SQLBind(UnixMillis.now())).run()
                try await sql.update("recycling_points")
                    .set(SQLIdentifier("visits"), to: SQLBinaryExpression(SQLIdentifier("visits"), .add, SQLBind(1)))
                    .where("id", .equal, pointID).run()
                try await RecyclingVersions.bump(.visits, on: sql)
                return (visits + 1, true)
            }
        } catch let error as APIError {
            throw error
        } catch let error as Refusal {
            throw error
        } catch {
            // NB: two requests with one visit id on PostgreSQL: the second's insert breaks the primary
            // key and rolls back; the visit is counted (by the first), not an error.
            let replay = try? await database.withConnection { sql -> Int64? in
                guard try await sql.select().column("point_id").from("recycling_visits")
                    .where("user_id", .equal, userID).where("visit_id", .equal, visitID).first() != nil else { return nil }
                return try await sql.select().column("visits").from("recycling_points").where("id", .equal, pointID).first()?
                    .decode(column: "visits", as: Int64.self)
            }
            guard let visits = replay ?? nil else { throw error }
            return (visits, false)
        }
    }
}
