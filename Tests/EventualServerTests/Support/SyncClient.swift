import EventualAPI
import Foundation
import Testing

/// One change as a device pushes it; a pantry item unless told otherwise.
struct SyncChangeJSON: Encodable, Sendable {
    var id = UUID().uuidString.lowercased()
    var collection = "pantry_items"
    var recordId: String
    var hlc: String
    var fields: [String: SyncValue] = [:]
    /// Amounts added to counter fields (absent when nil).
    var deltas: [String: Double]?
    var deleted = false
}

struct SyncResultJSON: Decodable, Equatable {
    let id: String
    let status: String
    let message: String?
    /// A refusal's code (a rule's, `deleted` or `quota`), when it has one.
    var code: String? = nil
}

struct SyncRecordJSON: Decodable, Equatable {
    let collection: String
    let recordId: String
    let fields: [String: SyncValue]
    let deleted: Bool
    let hlc: String
}

struct SyncPullJSON: Decodable {
    let changes: [SyncRecordJSON]
    let cursor: String
    let hasMore: Bool
}

/// HLC stamps relative to now, so that they pass the server's clock-drift check.
enum Stamps {
    /// A stamp `offset` milliseconds from now (negative: in the past), from `node`.
    static func at(_ offset: Int64, counter: Int = 0, node: String = "deviceA") -> String {
        HLCStamp(millis: UnixMillis.now() + offset, counter: counter, node: node).description
    }
}

/// The fields a new pantry item needs, with `overrides` on top.
func pantryItem(_ overrides: [String: SyncValue] = [:]) -> [String: SyncValue] {
    ["name": "Oat milk", "quantity": 1, "boughtAt": 1_700_000_000_000, "status": "inPantry"]
        .merging(overrides) { $1 }
}

extension API {
    func push(_ changes: [SyncChangeJSON], as account: Account?) async throws -> Answer {
        let body = String(decoding: try JSONEncoder().encode(["changes": changes]), as: UTF8.self)
        return try await send(.post, "/v1/sync/push", headers: account?.bearer ?? [:], json: body)
    }

    /// Pushes and returns the results, requiring a 200.
    func pushed(_ changes: [SyncChangeJSON], as account: Account,
                sourceLocation: SourceLocation = #_sourceLocation) async throws -> [SyncResultJSON] {
        let answer = try await push(changes, as: account)
        try #require(answer.status == .ok, "push: \(answer.text)", sourceLocation: sourceLocation)
        struct Results: Decodable { let results: [SyncResultJSON] }
        let results = try answer.decode(Results.self, sourceLocation: sourceLocation).results
        #expect(results.map(\.id) == changes.map(\.id), "results come in the request's order", sourceLocation: sourceLocation)
        return results
    }

    func pull(since: String? = nil, limit: Int? = nil, as account: Account?) async throws -> Answer {
        let query = [since.map { "since=\($0)" }, limit.map { "limit=\($0)" }].compactMap { $0 }.joined(separator: "&")
        return try await send(.get, "/v1/sync/pull" + (query.isEmpty ? "" : "?" + query), headers: account?.bearer ?? [:])
    }

    /// Pulls one page, requiring a 200.
    func pulled(since: String? = nil, limit: Int? = nil, as account: Account,
                sourceLocation: SourceLocation = #_sourceLocation) async throws -> SyncPullJSON {
        let answer = try await pull(since: since, limit: limit, as: account)
        try #require(answer.status == .ok, "pull: \(answer.text)", sourceLocation: sourceLocation)
        return try answer.decode(SyncPullJSON.self, sourceLocation: sourceLocation)
    }

    /// Every record of the user, deleted ones too, page after page, by record id.
    func pulledRecords(as account: Account, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: SyncRecordJSON] {
        var records: [String: SyncRecordJSON] = [:]
        // NB: from the beginning of every space, as a device that holds records asks: a first
        // pull (no cursor) leaves deleted records out, and these tests read the merged state.
        var cursor: String? = "s1"
        repeat {
            let page = try await pulled(since: cursor, as: account, sourceLocation: sourceLocation)
            for record in page.changes { records[record.recordId] = record }
            cursor = page.cursor
            if !page.hasMore { return records }
        } while true
    }
}
