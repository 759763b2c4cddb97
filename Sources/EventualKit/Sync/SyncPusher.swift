import EventualAPI
import Foundation
import GRDB
import Logging

/// The push phase of a round: claims the changes in batches, sends them, records the server's
/// answer for each one, re-stamps (once in a round) a change refused only because this device's
/// clock ran ahead, sends a batch the server refused whole again one change at a time, and puts a
/// batch back after a failed request. Made per round: it keeps what the round re-stamped.
struct SyncPusher {
    private let store: LocalStore
    private let link: ServerLink
    private let connectivity: ConnectivityMonitor
    private let configuration: SyncConfiguration
    private let logger: Logger
    /// Runs the space calls met among the changes.
    private let callRunner: CallRunner
    /// Changes re-stamped in this round after a refusal for this device's clock (once each).
    private var restampedInRound: Set<String> = []
    /// This round made everything due already, on learning the network is back.
    private var madeDueInRound = false

    init(store: LocalStore, link: ServerLink, connectivity: ConnectivityMonitor, configuration: SyncConfiguration,
         logger: Logger, callRunner: CallRunner) {
        self.store = store
        self.link = link
        self.connectivity = connectivity
        self.configuration = configuration
        self.logger = logger
        self.callRunner = callRunner
    }

    /// Sends the changes, and the space calls among them in the outbox's order: a space created
    /// offline exists before the first item put in it arrives, and a change made before leaving a
    /// space reaches it before the person leaves. A change never overtakes a space call queued
    /// before it that waits out a backoff.
    mutating func pushChangesAndSpaceCalls(_ report: inout SyncReport, on engine: isolated any SyncRoundHost) async throws {
        // NB: due by the round's start: a change put back during the round (held for the clock, or
        // unanswered) waits for the next round, instead of going again and again in this one when
        // the server answers more slowly than its backoff.
        let roundStart = UnixMillis.now()
        while true {
            let spaceCall = try await store.reader.read { db in try OutboxTable.firstWaitingCall(to: SpaceCall.operations, db: db) }
            try await pushChanges(before: spaceCall?.position, roundStart: roundStart, &report, on: engine)
            guard let spaceCall, spaceCall.nextAttemptAt <= UnixMillis.now() else { return }
            guard let claimed = try await store.writer.write({ db in try OutboxTable.claim(id: spaceCall.id, db: db) }) else { continue }
            try await callRunner.run(claimed, &report)
        }
    }

    private mutating func pushChanges(before position: Int64?, roundStart: Int64, _ report: inout SyncReport,
                                      on engine: isolated any SyncRoundHost) async throws {
        let configuration = self.configuration
        while true {
            let batch = try await store.writer.write { db in
                try OutboxTable.claim(kind: .change, limit: configuration.batchSize,
                                      maxBytes: configuration.maxBatchBytes - SyncWire.pushBytes(naming: configuration.app),
                                      now: roundStart, before: position, db: db)
            }
            guard !batch.isEmpty else { return }
            let answer: SyncWire.PushAnswer
            do {
                answer = try await send(batch)
            } catch {
                let failure = RemoteFailure.from(error)
                guard Self.refusesSomeChange(failure) else {
                    try await store.reschedule(batch, after: failure, backoff: configuration.retry)
                    throw error
                }
                connectivity.reportAnswer()
                if batch.count == 1 {
                    try await fail(batch[0], refusedWith: failure, &report)
                } else {
                    try await pushOneByOne(batch, refusedWhole: failure, &report)
                }
                continue
            }
            connectivity.reportAnswer()
            if engine.takeNetworkReturn(countingOffline: !madeDueInRound) {
                // NB: this answer is how the round learned the network is back (a timer round can
                // beat the connectivity probe): what waited out a backoff goes now, with the rest.
                madeDueInRound = true
                try await store.writer.write { db in try OutboxTable.makeAllDue(db) }
            }
            await store.learnServerTime(from: link)
            try await record(answer, for: batch, into: &report)
            // NB: a server restored since this device last heard it: no more pushes until the pull
            // has found that out and queued what it lost ahead of them (`ServerHistory.sendBack`).
            if !(answer.rewound ?? []).isEmpty { return }
        }
    }

    /// Sends a batch the server refused whole again one change at a time: the changes it takes go,
    /// and one it still refuses alone fails with its words, to be settled, instead of the whole
    /// batch waiting for ever behind it (a change refused alone is failed at once: `fail`).
    ///
    /// NB: this server refuses a push whole only for a change the engine refuses before queueing
    /// it (`SyncChangeLimits`), but an older server refused a push whole past a quota (413), and an
    /// outbox may hold changes queued by an older engine that checked less.
    private nonisolated(nonsending) mutating func pushOneByOne(_ batch: [OutboxEntry], refusedWhole: RemoteFailure,
                                                               _ report: inout SyncReport) async throws {
        logger.notice("push refused whole: sending its changes one at a time", metadata: ["reason": "\(refusedWhole)"])
        for (index, entry) in batch.enumerated() {
            let answer: SyncWire.PushAnswer
            do {
                answer = try await send([entry])
            } catch {
                let failure = RemoteFailure.from(error)
                guard Self.refusesSomeChange(failure) else {
                    try await store.reschedule(Array(batch[index...]), after: failure, backoff: configuration.retry)
                    throw error
                }
                try await fail(entry, refusedWith: failure, &report)
                continue
            }
            try await record(answer, for: [entry], into: &report)
        }
    }

    /// Fails a change the server refused a push of it alone for, with the server's words.
    private nonisolated(nonsending) func fail(_ entry: OutboxEntry, refusedWith failure: RemoteFailure,
                                              _ report: inout SyncReport) async throws {
        try await store.writer.write { db in try OutboxTable.markFailed(id: entry.id, message: failure.description, db: db) }
        logger.warning("change rejected", metadata: ["id": "\(entry.id)", "message": "\(failure.description)"])
        report.rejected += 1
        report.rejections.append((entry.id, failure.description))
    }

    /// Whether the server refused a push whole for what one of its changes holds (400 unreadable,
    /// 413 too large or past a quota), rather than for who sent it or when.
    static func refusesSomeChange(_ failure: RemoteFailure) -> Bool {
        if case .rejected(let status, _) = failure { return status == 400 || status == 413 }
        return false
    }

    private nonisolated(nonsending) func send(_ batch: [OutboxEntry]) async throws -> SyncWire.PushAnswer {
        let seen = try await store.reader.read { db in try ServerHistory.seenTags(db) }
        let (response, body) = try await link.send(.post, "/v1/sync/push", json: SyncWire.pushBody(batch, seen: seen, app: configuration.app),
                                                   operationID: "syncPush")
        guard response.status == .ok else { throw RemoteFailure.answer(response.status.code, body) }
        return try JSONDecoder().decode(SyncWire.PushAnswer.self, from: body)
    }

    /// The server's answers to a batch, by what becomes of each change.
    private struct Answers {
        var done: [String] = [], unanswered: [String] = []
        var rejected: [(id: String, message: String)] = [], refusals: [String: SyncWire.PushResult] = [:]
        /// Refused for this device's clock: re-stamped the first time in a round, held after that.
        var restamp: [(entry: OutboxEntry, message: String)] = [], held: [(id: String, message: String)] = []
        var duplicates = 0
        /// Refused by a server restored from a backup that this device has not sent back what it
        /// lost yet: tried again after that, never failed for it (the record it is about may be among what comes back).
        var afterRestore: [String] = []
        /// Refused because this device runs a newer version of the app than the server serves: they wait for it (`NewerAppWait`).
        var newerApp: [(id: String, message: String)] = []
    }

    private nonisolated(nonsending) mutating func record(_ answer: SyncWire.PushAnswer, for batch: [OutboxEntry],
                                                         into report: inout SyncReport) async throws {
        let answers = classify(answer.results, for: batch, serverRestored: !(answer.rewound ?? []).isEmpty)
        report.duplicates += answers.duplicates
        // NB: a server that lost a commit this device heard of gives no heads; the pull finds out and sends back what it lost.
        try await write(answers, for: batch, heads: (answer.rewound ?? []).isEmpty ? answer.heads ?? [] : [])
        restampedInRound.formUnion(answers.restamp.map(\.entry.id))
        report.sent += answers.done.count
        report.rejected += answers.rejected.count
        report.restamped += answers.restamp.count
        report.clockRefused += answers.held.count
        report.clockRefusals += answers.held.map { (entryID: $0.id, message: $0.message) }
        if let first = answers.newerApp.first {
            report.newerAppMessage = first.message
            logger.notice("changes wait for the server to serve this app's version", metadata: ["count": "\(answers.newerApp.count)",
                                                                                                "message": "\(first.message)"])
        }
        for (id, message) in answers.rejected {
            logger.warning("change rejected", metadata: ["id": "\(id)", "message": "\(message)"])
            report.rejections.append((id, message))
        }
    }

    private func classify(_ results: [SyncWire.PushResult], for batch: [OutboxEntry], serverRestored: Bool) -> Answers {
        let byID = Dictionary(results.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var answers = Answers()
        for entry in batch {
            guard let result = byID[entry.id] else { answers.unanswered.append(entry.id); continue }
            switch result.status {
            case .applied: answers.done.append(entry.id)
            case .duplicate:
                answers.done.append(entry.id)
                answers.duplicates += 1
            case .rejected where serverRestored:
                answers.afterRestore.append(entry.id)
            case .rejected where result.code == NewerAppWait.code && configuration.app != nil:
                answers.newerApp.append((entry.id, result.message ?? "this server serves an earlier version of the app"))
            case .rejected:
                let message = result.message ?? "rejected by the server"
                guard isClockRefusal(entry, message: message) else {
                    answers.rejected.append((entry.id, message))
                    answers.refusals[entry.id] = result
                    continue
                }
                // NB: refused only because this device's clock ran ahead: never failed, never lost.
                if restampedInRound.contains(entry.id) {
                    answers.held.append((entry.id, message))
                } else {
                    answers.restamp.append((entry, message))
                }
            }
        }
        return answers
    }

    /// Writes the answers in one transaction: the changes the server took go, those it refused
    /// fail (with its record, to settle), clock refusals are stamped again or held, and the
    /// unanswered wait.
    private nonisolated(nonsending) func write(_ answers: Answers, for batch: [OutboxEntry], heads: [SyncHead]) async throws {
        let retryAt = UnixMillis.now() + configuration.retry.delay(afterFailures: 0).milliseconds
        let heldRetryAt = UnixMillis.now() + configuration.retry.delay(afterFailures: batch.map(\.attempts).max() ?? 0).milliseconds
        let clock = store.clock
        let serverRecords = try answers.refusals.compactMapValues { try $0.current.map { try JSONEncoder.sorted.encode($0) } }
        let done = Set(answers.done)
        try await store.writer.write { db in
            try ServerHistory.noteAcknowledged(batch.filter { done.contains($0.id) }, db)
            try ServerHistory.remember(heads, db)
            try OutboxTable.remove(ids: answers.done, db: db)
            for (id, message) in answers.rejected {
                let refusal = answers.refusals[id]
                try OutboxTable.markFailed(id: id, message: message, code: refusal?.code, field: refusal?.field,
                                           serverRecord: serverRecords[id], db: db)
            }
            if !answers.afterRestore.isEmpty {
                // NB: the pull finds the restore out, and what it sends back goes before these (`ServerHistory.sendBack`).
                try OutboxTable.reschedule(ids: answers.afterRestore, retryAt: UnixMillis.now() + 1,
                                           error: "the server was restored from an earlier copy: sent again once it has what it lost",
                                           countsAsAttempt: false, db: db)
            }
            if !answers.unanswered.isEmpty {
                try OutboxTable.reschedule(ids: answers.unanswered, retryAt: retryAt, error: "the server did not answer for this change",
                                           countsAsAttempt: true, db: db)
            }
            for (entry, message) in answers.restamp {
                let change = try JSONDecoder().decode(ChangePayload.self, from: entry.payload)
                let restamped = change.stamped(clock.tick().description)
                try OutboxTable.replacePayload(id: entry.id, payload: try JSONEncoder.sorted.encode(restamped), error: message, db: db)
            }
            if !answers.restamp.isEmpty { try EngineSchema.saveLastStamp(clock.latest, db) }
            try NewerAppWait.hold(answers.newerApp, db: db)
            for (id, message) in answers.held {
                try OutboxTable.reschedule(ids: [id], retryAt: heldRetryAt, error: message, countsAsAttempt: true, db: db)
            }
        }
    }

    /// Whether the server refused a change only because its stamp is ahead of the server's clock:
    /// it says so, or the stamp lies beyond what this engine allows past the server's time.
    private func isClockRefusal(_ entry: OutboxEntry, message: String) -> Bool {
        if message.contains("ahead of the server's clock") { return true }
        guard let serverNow = link.serverTime.now(),
              let change = try? JSONDecoder().decode(ChangePayload.self, from: entry.payload),
              let stamp = HLCStamp(parsing: change.hlc) else { return false }
        return stamp.millis > serverNow + store.clock.maxDrift.milliseconds
    }
}
