import EventualStorage
import Foundation
import Logging
import ServiceLifecycle

/// Carries live events to every server process's `LiveHub`: within this process on SQLite (one
/// process serves it), through PostgreSQL's `LISTEN`/`NOTIFY` on PostgreSQL, where each process
/// listens on one channel and signals its own connections.
///
/// A `NOTIFY` carries the event, never record data, and PostgreSQL delivers it at most once, to
/// the connections listening then. So a process whose listening connection is lost reconnects
/// and, once listening again, tells every device it holds to pull once: a notification missed
/// while it was away never means a change missed.
final class LiveBus: Service, Sendable {
    /// What one process tells the others.
    enum Event: Codable, Equatable {
        case moved(LiveMove)
        case poke([String])
        case signedOut(String)
    }

    static let channel = "eventual_live"
    /// PostgreSQL refuses a payload of 8,000 bytes or more; a space's signal with many members is
    /// sent in parts under this.
    static let largestPayload = 7_000

    let hub: LiveHub
    private let database: Database
    private let logger: Logger
    private let relisten: Backoff

    struct Backoff: Sendable {
        var first: Duration = .milliseconds(100)
        var most: Duration = .seconds(5)
    }

    init(hub: LiveHub, database: Database, logger: Logger, relisten: Backoff = Backoff()) {
        self.hub = hub
        self.database = database
        self.logger = logger
        self.relisten = relisten
    }

    /// Sends `event` to every process's hub (this one's included). NB: a failure to notify is
    /// logged and never fails the push that made it: the change is committed, and devices that
    /// miss the signal find it at their next pull.
    func publish(_ event: Event) async {
        guard database.dialect == .postgres else { return deliver(event) }
        for part in Self.parts(of: event) {
            do {
                try await database.notify(Self.channel, payload: String(decoding: try JSONEncoder().encode(part), as: UTF8.self))
            } catch {
                logger.warning("live signal not sent", metadata: ["error": "\(StorageError.logSafeDescription(of: error))"])
            }
        }
    }

    /// `event` in payloads PostgreSQL accepts: a move's members split until each part fits.
    static func parts(of event: Event) -> [Event] {
        guard case .moved(let move) = event, move.members.count > 1,
              let size = try? JSONEncoder().encode(event).count, size > largestPayload else { return [event] }
        let half = move.members.count / 2
        return [Array(move.members[..<half]), Array(move.members[half...])].flatMap { members in
            parts(of: .moved(LiveMove(space: move.space, position: move.position, collections: move.collections, members: members,
                                      by: move.by)))
        }
    }

    private func deliver(_ event: Event) {
        switch event {
        case .moved(let move): hub.deliver(move)
        case .poke(let people): hub.poke(people)
        case .signedOut(let fingerprint): hub.signedOut(fingerprint)
        }
    }

    /// On PostgreSQL, listens until the service group shuts down, listening again after a lost
    /// connection; on SQLite, waits for the shutdown.
    func run() async throws {
        guard database.dialect == .postgres else {
            try? await gracefulShutdown()
            return
        }
        await cancelWhenGracefulShutdown {
            await self.listenForever()
        }
    }

    private func listenForever() async {
        var failures = 0
        var lost = false
        while !Task.isCancelled {
            do {
                try await database.listen(on: Self.channel, listening: {
                    failures = 0
                    // NB: what was notified while no connection listened is gone: every device here
                    // pulls once. That includes the first time: a device may have opened its channel
                    // before this process listened.
                    if lost { logger.notice("listening for live signals again: every connected device pulls once") }
                    hub.pokeAll()
                }, receive: { payload in
                    guard let event = try? JSONDecoder().decode(Event.self, from: Data(payload.utf8)) else {
                        return logger.warning("a live signal that is not one", metadata: ["bytes": "\(payload.utf8.count)"])
                    }
                    deliver(event)
                })
            } catch {
                if Task.isCancelled { return }
                logger.warning("live signals' connection lost", metadata: ["error": "\(StorageError.logSafeDescription(of: error))"])
            }
            if Task.isCancelled { return }
            lost = true
            let wait = min(relisten.most, relisten.first * (1 << min(failures, 10)))
            failures += 1
            try? await Task.sleep(for: wait)
        }
    }
}
