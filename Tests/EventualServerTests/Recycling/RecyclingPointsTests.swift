import EventualAPI
import Foundation
import Testing
@testable import EventualServer

@Suite("Recycling points: nearest, materials, ETags, visits", .timeLimit(.minutes(3)))
struct RecyclingPointsTests {
    /// The Point features of a real export, read independently of the importer.
    private static func realPoints(_ url: URL) throws -> [(id: String, position: GeoPosition, materials: Set<String>)] {
        let root = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        return (root["features"] as! [[String: Any]]).map { feature in
            let coordinates = (feature["geometry"] as! [String: Any])["coordinates"] as! [Double]
            let properties = feature["properties"] as! [String: Any]
            let materials = Set(properties.compactMap { key, value -> String? in
                guard key.hasPrefix("recycling:"), value as? String == "yes" else { return nil }
                return PointMaterial(osmKey: String(key.dropFirst(10)))?.rawValue
            })
            return (feature["id"] as! String, GeoPosition(latitude: coordinates[1], longitude: coordinates[0]), materials)
        }
    }

    @Test(arguments: Backend.available)
    func nearestAnswersEqualABruteForceHaversineRankingOnTheRealFiles(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            try await RecyclingData.withDatabase(location) { database in
                _ = try await PointImporter(database: database).importGeoJSON(at: RecyclingData.salzburg)
                _ = try await PointImporter(database: database).importGeoJSON(at: RecyclingData.malaga)
            }
            let all = try Self.realPoints(RecyclingData.salzburg) + Self.realPoints(RecyclingData.malaga)
            // Origins in both cities, between points and far off, with and without a material filter
            let origins = [GeoPosition(latitude: 47.8095, longitude: 13.0550), GeoPosition(latitude: 47.7700, longitude: 13.0800),
                           GeoPosition(latitude: 36.7213, longitude: -4.4214), GeoPosition(latitude: 36.7300, longitude: -4.4300),
                           GeoPosition(latitude: 40.4168, longitude: -3.7038)]
            for origin in origins {
                for (material, limit) in [(nil, 25), ("glass", 10), ("batteries", 5), ("textiles", 40)] as [(String?, Int)] {
                    let query = "/v1/recycling/points?near=\(origin.latitude),\(origin.longitude)&limit=\(limit)"
                        + (material.map { "&material=\($0)" } ?? "")
                    let answer = try await api.send(.get, query)
                    try #require(answer.status == .ok, "\(query): \(answer.text)")
                    let found = try answer.decode(PointListJSON.self).points
                    let expected = all.filter { material == nil || $0.materials.contains(material!) }
                        .map { (id: $0.id, meters: origin.distance(to: $0.position)) }
                        .sorted { $0.meters < $1.meters }
                        .prefix(limit)
                    #expect(found.count == expected.count, "\(query)")
                    for (got, want) in zip(found, expected) {
                        #expect(abs((got.distanceMeters ?? -1) - want.meters) < 0.001, "\(query): \(got.id) vs \(want.id)")
                    }
                    #expect(Set(found.map(\.id)) == Set(expected.map(\.id)) || found.last?.distanceMeters == expected.last?.meters,
                            "\(query): the same points (ties at the end aside)")
                    if let material { #expect(found.allSatisfy { $0.materials.contains(material) }) }
                }
            }
        }
    }

    @Test(arguments: Backend.available)
    func theWholeSetHasAnETagThatAVisitChangesAndVisitsCountOncePerVisitID(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            try await RecyclingData.withDatabase(location) { database in
                _ = try await PointImporter(database: database).importGeoJSON(at: RecyclingData.salzburg)
            }
            // Given the whole set and its ETag
            let first = try await api.send(.get, "/v1/recycling/points")
            #expect(first.status == .ok)
            let etag = try #require(first.headers[.eTag])
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""), "a strong ETag")
            #expect(try first.decode(PointListJSON.self).points.count == 360)
            // When it is asked again with that ETag, then nothing is sent
            let again = try await api.send(.get, "/v1/recycling/points", headers: [.ifNoneMatch: etag])
            #expect(again.status == .notModified)
            #expect(again.body.readableBytes == 0)
            // When a user records a visit, twice with one visit id
            let account = try await api.signUp("visitor")
            let visit = try await api.send(.post, "/v1/recycling/points/node%2F457722547/visits", headers: account.bearer,
                                           json: #"{"visitId":"v-1"}"#)
            #expect(visit.status == .ok, "\(visit.text)")
            let replay = try await api.send(.post, "/v1/recycling/points/node%2F457722547/visits", headers: account.bearer,
                                            json: #"{"visitId":"v-1"}"#)
            let counted = try visit.decode(VisitJSON.self), replayed = try replay.decode(VisitJSON.self)
            #expect(counted.visits == 1 && counted.counted)
            #expect(replayed.visits == 1 && !replayed.counted)
            // Then the set's ETag changed and the point carries its visit
            let stale = try await api.send(.get, "/v1/recycling/points", headers: [.ifNoneMatch: etag])
            #expect(stale.status == .ok)
            #expect(stale.headers[.eTag] != etag)
            #expect(try stale.decode(PointListJSON.self).points.first { $0.id == "node/457722547" }?.visits == 1)
            // And a near answer reads the visit count fresh
            let near = try await api.send(.get, "/v1/recycling/points?near=47.7890375,13.0690924&limit=1")
            #expect(try near.decode(PointListJSON.self).points.first?.visits == 1)
            // And an unknown point is a 404, a NUL in a visit id a 400, no token a 401
            let unknown = try await api.send(.post, "/v1/recycling/points/node%2F0/visits", headers: account.bearer, json: #"{"visitId":"v-2"}"#)
            #expect(unknown.status == .notFound)
            let nul = try await api.send(.post, "/v1/recycling/points/node%2F457722547/visits", headers: account.bearer,
                                         json: #"{"visitId":"v\u0000"}"#)
            #expect(nul.status == .badRequest)
            #expect(try nul.error().message.contains("visitId"))
            let anonymous = try await api.send(.post, "/v1/recycling/points/node%2F457722547/visits", json: #"{"visitId":"v-3"}"#)
            #expect(anonymous.status == .unauthorized)
        }
    }

    @Test func twoConcurrentVisitsWithOneVisitIDCountOnce() async throws {
        for backend in Backend.available {
            try await withServer(backend) { api, location in
                try await RecyclingData.withDatabase(location) { database in
                    _ = try await PointImporter(database: database).importGeoJSON(at: RecyclingData.salzburg)
                }
                let account = try await api.signUp("racer")
                let answers = try await withThrowingTaskGroup(of: Answer.self) { group in
                    for _ in 0..<4 {
                        group.addTask {
                            try await api.send(.post, "/v1/recycling/points/node%2F457722547/visits", headers: account.bearer,
                                               json: #"{"visitId":"same"}"#)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(answers.allSatisfy { $0.status == .ok }, "\(answers.map(\.text))")
                #expect(try answers.filter { try $0.decode(VisitJSON.self).counted }.count == 1)
                let near = try await api.send(.get, "/v1/recycling/points?near=47.7890375,13.0690924&limit=1")
                #expect(try near.decode(PointListJSON.self).points.first?.visits == 1)
            }
        }
    }

    @Test func badQueriesAre400sNamingTheRule() async throws {
        try await withServer(.sqlite) { api in
            for query in ["near=91,0", "near=abc", "near=1,2,3", "near=0,181", "near=0,0&limit=0", "near=0,0&limit=1001",
                          "near=0,0&material=gold", "limit=5", "material=glass", "near=nan,0",
                          "near=%2B1,2", "near=1.,2", "near=0x1p3,2", "near=1e1,2", "near=1%00,2"] {
                let answer = try await api.send(.get, "/v1/recycling/points?\(query)")
                #expect(answer.status == .badRequest, "\(query): \(answer.text)")
                _ = try answer.error()
            }
            let longTag = try await api.send(.get, "/v1/recycling/points", headers: [.ifNoneMatch: String(repeating: "0", count: 129)])
            #expect(longTag.status == .badRequest)
            // An empty set is an answer, not an error
            let empty = try await api.send(.get, "/v1/recycling/points?near=0,0")
            #expect(empty.status == .ok)
            #expect(try empty.decode(PointListJSON.self).points.isEmpty)
        }
    }
}
