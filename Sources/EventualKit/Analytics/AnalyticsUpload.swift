import EventualAPI
import Foundation
import GRDB
import HTTPTypes

/// Sends the waiting usage events, oldest first, in batches of at most 500: the sync engine
/// runs it at the end of every round. An event leaves the device's table only once the server
/// has answered for it (filed now, filed before, or refused), so an answer lost on the way only
/// means the batch goes again, and the server files each id once.
struct AnalyticsUpload: Sendable {
    static let maxBatch = 500
    /// Well under the server's 1 MiB body limit with the envelope of 500 events.
    static let maxBatchBytes = 512 * 1024

    let store: LocalStore
    let link: ServerLink
    let limits: Analytics.Limits

    /// What one upload did.
    struct Report: Sendable {
        var sent = 0
        /// Of those, events the server had filed before (a batch sent again after a lost answer).
        var duplicates = 0
        var rejected = 0
    }

    /// The server cannot file events now (429 past its daily limit, 5xx, or no events endpoint):
    /// they stay, within their bounds, until `retryAfter` has passed.
    struct Deferred: Error {
        let status: Int
        let retryAfter: Duration?
    }

    func run() async throws -> Report {
        var report = Report()
        // NB: most rounds have nothing to send; a read says so without taking the write lock.
        let idle = try await store.reader.read { db in
            try AnalyticsTable.waiting(db) == 0
                && AnalyticsTable.tally(.dropped, db: db) == AnalyticsTable.tally(.droppedReported, db: db)
        }
        if idle { return report }
        while true {
            let batch = try await store.writer.write { [limits] db in
                let now = UnixMillis.now()
                try AnalyticsTable.prune(maxWaiting: limits.maxWaiting, oldest: now - limits.maxAge.milliseconds, db: db)
                try Self.reportDrops(db: db, now: now)
                return try AnalyticsTable.oldest(limit: Self.maxBatch, maxBytes: Self.maxBatchBytes, db: db)
            }
            guard !batch.isEmpty else { return report }
            let (response, body) = try await link.send(.post, "/v1/events", json: Self.body(batch), operationID: "recordEvents")
            let rejectedIDs: [String]
            switch response.status.code {
            case 200:
                let result = try JSONDecoder().decode(Components.Schemas.EventBatchResult.self, from: body)
                rejectedIDs = result.rejected.map(\.id)
                report.sent += result.accepted + result.duplicates
                report.duplicates += result.duplicates
            case 400, 413:
                // NB: a batch refused whole would be refused again for ever and hold back every later
                // event: it is counted as rejected and dropped, never retried.
                rejectedIDs = batch.map(\.id)
            case 401:
                throw RemoteFailure.answer(response.status.code, body)
            default:
                // NB: 429 (the day's limit), 404/405 (a server that files no events) and 5xx: later,
                // and never as a failure of the person's sync, whose changes already went.
                let retryAfter = response.headerFields[.retryAfter].flatMap { Int($0) }.map { Duration.seconds(max(0, $0)) }
                throw Deferred(status: response.status.code, retryAfter: retryAfter)
            }
            try await store.writer.write { db in
                try AnalyticsTable.remove(ids: batch.map(\.id), db: db)
                if !rejectedIDs.isEmpty { try AnalyticsTable.add(rejectedIDs.count, to: .rejected, db: db) }
            }
            report.rejected += rejectedIDs.count
        }
    }

    /// Turns drops the server has not heard of into one `events_dropped` event, so that the
    /// dashboard knows what is missing.
    static func reportDrops(db: Database, now: Int64) throws {
        let unreported = try AnalyticsTable.tally(.dropped, db: db) - AnalyticsTable.tally(.droppedReported, db: db)
        guard unreported > 0,
              let newest = try Row.fetchOne(db, sql: "SELECT app, app_version, platform, session_id FROM eventual_events ORDER BY position DESC LIMIT 1")
        else { return }
        let properties = try JSONEncoder.sorted.encode([AnalyticsKey.count: SyncValue.integer(Int64(unreported))])
        try AnalyticsTable.insert(AnalyticsRow(id: UUIDv7.make(millis: now), name: AnalyticsName.eventsDropped, properties: properties,
                                               at: now, app: newest["app"], appVersion: newest["app_version"],
                                               platform: newest["platform"], sessionID: newest["session_id"]), db: db)
        try AnalyticsTable.add(unreported, to: .droppedReported, db: db)
    }

    /// `{"events":[…]}`, each event's properties spliced in as stored.
    static func body(_ batch: [AnalyticsRow]) -> Data {
        var body = Data(#"{"events":["#.utf8)
        body.reserveCapacity(batch.reduce(32) { $0 + $1.properties.count + 250 })
        for (index, event) in batch.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: #"{"id":"#.utf8)
            WireJSON.appendString(event.id, to: &body)
            body.append(contentsOf: #","name":"#.utf8)
            WireJSON.appendString(event.name, to: &body)
            body.append(contentsOf: #","app":"#.utf8)
            WireJSON.appendString(event.app, to: &body)
            body.append(contentsOf: #","appVersion":"#.utf8)
            WireJSON.appendString(event.appVersion, to: &body)
            body.append(contentsOf: #","platform":"#.utf8)
            WireJSON.appendString(event.platform, to: &body)
            body.append(contentsOf: #","sessionId":"#.utf8)
            WireJSON.appendString(event.sessionID, to: &body)
            body.append(contentsOf: #","at":"#.utf8)
            body.append(contentsOf: String(event.at).utf8)
            body.append(contentsOf: #","properties":"#.utf8)
            body.append(event.properties)
            body.append(UInt8(ascii: "}"))
        }
        body.append(contentsOf: "]}".utf8)
        return body
    }
}
