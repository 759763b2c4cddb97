import EventualAPI
import Foundation
import OpenAPIRuntime

extension APIService {
    static let pullLimits = 1...1000
    static let defaultPullLimit = 500
    /// What each change of a push is answered when the server lost commits its device heard of.
    static let heldAfterRestore = "The server was restored from an earlier copy: this change is sent again after what the device holds"

    func syncPush(_ input: Operations.SyncPush.Input) async throws -> Operations.SyncPush.Output {
        guard case .json(let body) = input.body else { throw APIError.badRequest("expected a JSON body") }
        let userID = try await authenticatedUserID()
        let now = UnixMillis.now()
        if let app = body.app, !AppDeclaration.isAppID(app.id) {
            throw APIError.badRequest("app.id must be an app's id: a lowercase letter, then up to 31 lowercase letters, digits or _")
        }
        try refuseBelowMinimum(body.app.map { ($0.id, $0.version) }, collections: body.changes.map(\.collection), all: false)
        let submissions = try pushValidation.submissions(of: body.changes, by: userID, now: now)
        if let seen = body.seen, seen.count > SyncHistory.mostSeen || !seen.allSatisfy(SyncHistory.isTag) {
            throw APIError.badRequest("seen must be at most \(SyncHistory.mostSeen) tags of a pull's or a push's heads"
                + " (\(SyncHistory.tagLength) characters of A-Z, a-z, 0-9, - and _ each)")
        }
        // NB: a device that heard of commits this server no longer has (restored from an earlier
        // copy) may hold records the server lost, and changes made since on top of them: nothing
        // it sends is applied until it has sent those back (its pull finds out, and queues them
        // first). Applied now, a later deletion or edit would beat the records it came after.
        let rewound = try await sync.unknownTags(body.seen ?? [])
        guard rewound.isEmpty else {
            let results = body.changes.map { change in
                SyncWire.PushResult(id: change.id, status: .rejected, message: Self.heldAfterRestore)
            }
            return .ok(.init(body: .json(try .init(SyncWire.PushAnswer(results: results, heads: [], rewound: rewound)))))
        }
        let by = RequestScope.current?.bearerToken.map { AccessToken.fingerprint(ofHash: AccessToken.hash($0)) }
        let (outcomes, moves) = try await sync.pushed(submissions, userID: userID, now: now, quota: quotas.syncRecordsPerUser,
                                                      byteQuota: quotas.bytesPerUser, by: by)
        for move in moves { await live.publish(.moved(move)) }
        // NB: the spaces of duplicates too: the change was applied by an earlier push whose answer
        // was lost, and its commit must be among those the device heard of.
        let written = Set(moves.map(\.space)).union(zip(submissions, outcomes).compactMap { submission, outcome in
            switch outcome {
            case .applied, .duplicate: return submission.space
            case .rejected, .refused: return nil
            }
        })
        let heads = written.isEmpty ? [] : try await sync.heads(of: written.sorted())
        var counts = (applied: 0, duplicate: 0, rejected: 0)
        for outcome in outcomes {
            switch outcome {
            case .applied: counts.applied += 1
            case .duplicate: counts.duplicate += 1
            case .rejected, .refused: counts.rejected += 1
            }
        }
        metrics.syncPushed(applied: counts.applied, duplicate: counts.duplicate, rejected: counts.rejected)
        let newerApp = newerAppVersion(body.app)
        let results = zip(zip(body.changes, submissions), outcomes).map { pair, outcome in
            let (change, submission) = pair
            switch outcome {
            case .applied: return SyncWire.PushResult(id: change.id, status: .applied)
            case .duplicate: return SyncWire.PushResult(id: change.id, status: .duplicate)
            case .rejected(let message):
                if let newerApp, case .failure(let rejection) = submission.change, rejection.namesOnlyUnknown {
                    let words = "\(message): this server serves version \(newerApp.served) of \(newerApp.id), the device runs version"
                        + " \(newerApp.device); the change waits on the device until that version is deployed"
                    return SyncWire.PushResult(id: change.id, status: .rejected, message: words, code: Self.newerAppCode)
                }
                return SyncWire.PushResult(id: change.id, status: .rejected, message: message)
            case .refused(let violation, let current):
                return SyncWire.PushResult(id: change.id, status: .rejected, message: violation.message, code: violation.code,
                                           field: violation.field, current: current.map(\.pulled))
            }
        }
        return .ok(.init(body: .json(try .init(SyncWire.PushAnswer(results: results, heads: heads)))))
    }

    /// Refuses a push or a pull that names an app this server does not serve (404), or that
    /// touches the collections of an app at a version below the oldest it syncs
    /// (`upgrade_required`): `collections` are those it writes or reads (`all`: every collection,
    /// a pull from before subscriptions). The device runs the version it names of the app it
    /// names, and version 1 of any other app whose collections it touches (a device from before
    /// versions names none), so that naming another app, or none, never gets past a minimum.
    private func refuseBelowMinimum(_ app: (id: String, version: Int)?, collections: [String], all: Bool) throws {
        if let app { _ = try servedApp(app.id) }
        let snapshot = catalog.snapshot
        // NB: most servers raise no minimum: a push then reads none of its changes' collections here.
        guard snapshot.apps.contains(where: { $0.app.minimumVersion > 1 }) else { return }
        let touched = all ? snapshot.apps.filter { !$0.app.collections.isEmpty }.map(\.app)
            : Set(collections.compactMap { snapshot.collections[$0]?.app.rawValue }).sorted().compactMap { snapshot.app($0)?.app }
        for served in touched {
            let version = app?.id == served.id.rawValue ? app?.version ?? 1 : 1
            guard version < served.minimumVersion else { continue }
            throw Refusal.upgradeRequired("Update the app to sync: version \(version) of \(served.title) is no longer synced here"
                + " (the oldest is \(served.minimumVersion)); what it has to send stays on the device")
        }
    }

    /// The app and version of a pull's `app` value (`pantry@2`).
    private static func appAtVersion(_ value: String) throws -> (id: String, version: Int) {
        let parts = value.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, AppDeclaration.isAppID(String(parts[0])), let version = Int(parts[1]),
              (1...AppDeclaration.Limits.version).contains(version) else {
            throw APIError.badRequest("app must be an app's id and its version, as pantry@2 (a version from 1 to"
                + " \(AppDeclaration.Limits.version)), not '\(value.prefix(40))'")
        }
        return (String(parts[0]), version)
    }

    /// The code of a change that waits on its device for a newer version of its app to be deployed.
    static let newerAppCode = "newer_app"

    /// The pushing device's app and version, and the version served, when the device's is above
    /// the one served; nil otherwise (no app named, or one not served here at all).
    private func newerAppVersion(_ app: Components.Schemas.AppVersion?) -> (id: String, device: Int, served: Int)? {
        guard let app, let served = catalog.snapshot.app(app.id)?.app.version, app.version > served else { return nil }
        return (app.id, app.version, served)
    }

    func syncPull(_ input: Operations.SyncPull.Input) async throws -> Operations.SyncPull.Output {
        let userID = try await authenticatedUserID()
        let cursor = try SyncCursor(parsing: input.query.since, personalSpace: userID)
        let limit = input.query.limit ?? Self.defaultPullLimit
        guard Self.pullLimits.contains(limit) else {
            throw APIError.badRequest("limit must be from \(Self.pullLimits.lowerBound) to \(Self.pullLimits.upperBound), not \(limit)")
        }
        let fill = try PullFieldFill(parsing: input.query.field, collections: catalog.collections)
        let subscription = try PullSubscription(parsing: input.query.collection, filling: fill)
        try refuseBelowMinimum(try input.query.app.map(Self.appAtVersion), collections: subscription?.parts.map(\.collection) ?? [],
                               all: subscription == nil)
        var seen: [String] = []
        if let value = input.query.seen {
            guard let tags = SyncHistory.tags(inSeen: value) else {
                throw APIError.badRequest("seen must be the tags of a pull's or a push's heads (at most \(SyncHistory.mostSeen)"
                    + " of \(SyncHistory.tagLength) characters of A-Z, a-z, 0-9, - and _), joined by '.'")
            }
            seen = tags
        }
        // NB: no `since` is a first pull, which sends no deleted record (an empty cursor, `s1`, sends them).
        let page = try await sync.pull(userID: userID, after: input.query.since == nil ? nil : cursor, limit: limit,
                                       subscription: subscription, counting: input.query.count ?? false, seen: seen)
        let records = fill.map { fill in page.records.map(fill.narrowed) } ?? page.records
        let pulled = SyncWire.PulledPage(changes: records.map(\.pulled), cursor: page.cursor.token, hasMore: page.hasMore,
                                         spaces: page.spaces, removed: page.removed, remaining: page.remaining,
                                         heads: page.heads, rewound: page.rewound.isEmpty ? nil : page.rewound)
        return .ok(.init(body: .json(try .init(pulled))))
    }

    func syncRecords(_ input: Operations.SyncRecords.Input) async throws -> Operations.SyncRecords.Output {
        let userID = try await authenticatedUserID()
        let space = try input.query.space.map { try SpaceRules.id($0, field: "space") } ?? userID
        let collection = input.query.collection
        guard (1...64).contains(collection.utf8.count), collection.utf8.first.map({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }) == true,
              collection.utf8.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                  || $0 == UInt8(ascii: "_") })
        else { throw APIError.badRequest("collection must be a collection's name: 1 to 64 of a-z, 0-9 and _, starting with a letter") }
        for id in input.query.id {
            try TextRules.check(id, field: "id")
            guard SyncChangeLimits.recordIDLengths.contains(id.unicodeScalars.count) else {
                throw APIError.badRequest("id must be 1 to \(SyncChangeLimits.recordIDLengths.upperBound) characters long, not \(id.unicodeScalars.count)")
            }
        }
        guard (1...Self.mostRecordsAsked).contains(input.query.id.count) else {
            throw APIError.badRequest("id must be given 1 to \(Self.mostRecordsAsked) times, not \(input.query.id.count)")
        }
        let records = try await sync.records(input.query.id, of: collection, in: space, for: userID)
        return .ok(.init(body: .json(try .init(SyncWire.RecordList(records: records.map(\.pulled))))))
    }

    /// The most records one `GET /v1/sync/records` asks for (the contract's `maxItems`).
    static let mostRecordsAsked = 100

}

extension SyncedRecord {
    /// The record as the wire carries it: in a pull, a look-up by id, and as a rule's refusal's `current`.
    var pulled: SyncWire.PulledRecord {
        SyncWire.PulledRecord(collection: collection, recordId: recordID, fields: fields, deleted: isDeleted,
                              hlc: newestStamp?.description ?? "", space: space, changedBy: changedBy, state: state)
    }
}
