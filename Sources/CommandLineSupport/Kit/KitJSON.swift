import EventualAPI
import EventualKit
import Foundation

// The JSON the kit's commands print, one shape for one idea in every app (docs/json.md names
// each key): every key present, `null` when unknown.

/// `status --json`: the keys every app prints, then the app's own (`AppCommand.StatusDetails`).
struct StatusJSON<Details: Encodable>: Encodable {
    let connectivity: String
    let pending: Int
    let failed: Int
    @JSONNullable var lastSyncAt: String?
    let signOutsWaiting: Int
    let mustSignInAgain: Bool
    let firstSync: [FirstSyncJSON]
    let attachmentsWaiting: AttachmentsWaitingJSON
    let entries: [OutboxLineJSON]
    let details: Details?

    init(_ status: DeviceStatus, device: SignedInDevice, details: Details?) {
        connectivity = status.connectivity.rawValue
        pending = status.pending
        failed = status.failed
        lastSyncAt = status.lastSyncAt.map(Timestamp.iso8601)
        signOutsWaiting = status.pendingRevocations
        mustSignInAgain = DeviceWords.mustSignInAgain(device)
        firstSync = status.firstSync.map(FirstSyncJSON.init)
        attachmentsWaiting = AttachmentsWaitingJSON(status)
        entries = status.entries.map(OutboxLineJSON.init)
        self.details = details
    }

    private enum CodingKeys: String, CodingKey {
        case connectivity, pending, failed, lastSyncAt, signOutsWaiting, mustSignInAgain, firstSync, attachmentsWaiting, entries
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(connectivity, forKey: .connectivity)
        try container.encode(pending, forKey: .pending)
        try container.encode(failed, forKey: .failed)
        try container.encode(lastSyncAt, forKey: .lastSyncAt)
        try container.encode(signOutsWaiting, forKey: .signOutsWaiting)
        try container.encode(mustSignInAgain, forKey: .mustSignInAgain)
        try container.encode(firstSync, forKey: .firstSync)
        try container.encode(attachmentsWaiting, forKey: .attachmentsWaiting)
        try container.encode(entries, forKey: .entries)
        // NB: the app's own keys go in the same object, beside the shared ones.
        try details?.encode(to: encoder)
    }
}

/// One refusal in `failures --json`: a change of a record (`kind` "change") or a call ("call").
struct FailureJSON: Encodable {
    let id, shortId, kind, what, reason: String
    @JSONNullable var collection: String?
    @JSONNullable var recordId: String?
    @JSONNullable var code: String?
    @JSONNullable var field: String?
    /// The shared space's name, and its id.
    @JSONNullable var space: String?
    @JSONNullable var spaceId: String?
    let knowsServerState: Bool
    let attempts: Int
    let createdAt: String

    init(_ change: FailedChange, what: String, spaceNames: [String: String]) {
        id = change.id
        shortId = change.shortID
        kind = "change"
        self.what = what
        reason = change.reason
        collection = change.collection
        recordId = change.recordID
        code = change.code
        field = change.field
        space = change.space.map { spaceNames[$0] ?? $0 }
        spaceId = change.space
        knowsServerState = change.knowsServerState
        attempts = change.attempts
        createdAt = Timestamp.iso8601(change.createdAt)
    }

    init(_ entry: OutboxEntry, line: OutboxLine) {
        id = entry.id
        shortId = line.shortID
        kind = "call"
        what = line.summary
        reason = entry.lastError ?? "refused by the server"
        // NB: a refused upload names the record its file belongs to.
        collection = line.upload?.holders.first?.collection
        recordId = line.recordID
        knowsServerState = false
        attempts = entry.attempts
        createdAt = Timestamp.iso8601(entry.createdAt)
    }
}
