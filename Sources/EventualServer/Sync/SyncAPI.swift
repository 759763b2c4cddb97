import EventualAPI
import Foundation
import OpenAPIRuntime

extension APIService {
    static let maxChangesPerPush = 500
    static let changeIDLengths = 1...128
    static let pullLimits = 1...1000
    static let defaultPullLimit = 500

    func syncPush(_ input: Operations.SyncPush.Input) async throws -> Operations.SyncPush.Output {
        guard case .json(let body) = input.body else { throw APIError.badRequest("expected a JSON body") }
        let userID = try await authenticatedUserID()
        guard body.changes.count <= Self.maxChangesPerPush else {
            throw APIError.badRequest("a push carries at most \(Self.maxChangesPerPush) changes, not \(body.changes.count): send them in several batches")
        }
        try SyncInputRules.check(body.changes)
        for (index, change) in body.changes.enumerated() where !Self.changeIDLengths.contains(change.id.unicodeScalars.count) {
            throw APIError.badRequest("changes[\(index)].id must be 1 to \(Self.changeIDLengths.upperBound) characters long")
        }
        let now = UnixMillis.now()
        let rules = syncRules
        let submissions = body.changes.map { change in
            SyncSubmission(id: change.id, change: Result { () throws(SyncRejection) in
                try rules.validate(collection: change.collection, recordID: change.recordId, hlc: change.hlc,
                                   fields: change.fields.additionalProperties.value,
                                   deltas: change.deltas?.additionalProperties ?? [:], deleted: change.deleted, now: now)
            })
        }
        let outcomes = try await sync.push(submissions, userID: userID, now: now, quota: quotas.syncRecordsPerUser,
                                           byteQuota: quotas.bytesPerUser)
        var counts = (applied: 0, duplicate: 0, rejected: 0)
        for outcome in outcomes {
            switch outcome {
            case .applied: counts.applied += 1
            case .duplicate: counts.duplicate += 1
            case .rejected: counts.rejected += 1
            }
        }
        metrics.syncPushed(applied: counts.applied, duplicate: counts.duplicate, rejected: counts.rejected)
        let results = zip(body.changes, outcomes).map { change, outcome in
            switch outcome {
            case .applied: return Components.Schemas.SyncResult(id: change.id, status: .applied)
            case .duplicate: return Components.Schemas.SyncResult(id: change.id, status: .duplicate)
            case .rejected(let message): return Components.Schemas.SyncResult(id: change.id, status: .rejected, message: message)
            }
        }
        return .ok(.init(body: .json(.init(results: results))))
    }

    func syncPull(_ input: Operations.SyncPull.Input) async throws -> Operations.SyncPull.Output {
        let userID = try await authenticatedUserID()
        let cursor = try Self.cursor(input.query.since)
        let limit = input.query.limit ?? Self.defaultPullLimit
        guard Self.pullLimits.contains(limit) else {
            throw APIError.badRequest("limit must be from \(Self.pullLimits.lowerBound) to \(Self.pullLimits.upperBound), not \(limit)")
        }
        let page = try await sync.pull(userID: userID, after: cursor, limit: limit)
        let changes = try page.records.map { record in
            Components.Schemas.SyncRecord(
                collection: record.collection, recordId: record.recordID,
                fields: .init(additionalProperties: try OpenAPIObjectContainer(unvalidatedValue: record.state.fields.mapValues(\.anyValue))),
                deleted: record.state.isDeleted, hlc: record.state.newestStamp?.description ?? "",
                space: userID, changedBy: nil
            )
        }
        return .ok(.init(body: .json(.init(changes: changes, cursor: String(page.cursor), hasMore: page.hasMore,
                                           spaces: [.init(id: userID, name: "Personal", kind: .personal, role: .owner)], removed: []))))
    }

    /// Most digits of a cursor: any 18 digits fit in an Int64, and no database counts that far.
    static let maxCursorDigits = 18

    /// The `since` of a pull: absent for the first one, else a cursor a previous pull returned,
    /// 1 to 18 digits as the contract's pattern says.
    static func cursor(_ since: String?) throws(APIError) -> Int64 {
        guard let since else { return 0 }
        guard (1...Self.maxCursorDigits).contains(since.utf8.count),
              since.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let cursor = Int64(since)
        else {
            throw .badRequest("since must be a cursor returned by an earlier pull (1 to \(Self.maxCursorDigits) digits), not '\(since.prefix(40))'")
        }
        return cursor
    }
}
