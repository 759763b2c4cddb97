import EventualAPI
import Foundation
import GRDB
import Logging
import Synchronization

/// Records usage events on the device, offline too, for the server's business questions. The
/// sync engine sends them in batches (`POST /v1/events`, at most 500 a request), each id filed
/// once however often it is sent.
///
/// Events never grow without bound: past `Limits.maxWaiting` waiting, or older than
/// `Limits.maxAge`, the oldest are dropped and counted (the server hears how many in an
/// `events_dropped` event). Nothing that looks like an email, a password, a token, a photo or an
/// exact position is ever stored (`AnalyticsPrivacy`).
///
///     await analytics.record(.mapOpened(from: .navbar))
public final class Analytics: Sendable {
    /// How many events may wait, and for how long.
    public struct Limits: Sendable {
        public var maxWaiting: Int
        public var maxAge: Duration

        public init(maxWaiting: Int = 10_000, maxAge: Duration = .seconds(30 * 86_400)) {
            self.maxWaiting = maxWaiting
            self.maxAge = maxAge
        }
    }

    /// What became of one `record` call.
    public enum Outcome: Sendable, Equatable {
        case recorded(id: String)
        /// Recording is switched off: nothing was stored.
        case off
        /// The event broke a rule of `AnalyticsPrivacy` (a bug in the app, never the user's doing).
        case refused(String)
        /// The local database could not store it.
        case failed(String)
    }

    /// The platforms an event names; `current` is the one this code runs on.
    public static var currentPlatform: String {
        #if os(iOS)
        "ios"
        #elseif os(macOS)
        "macos"
        #elseif os(Android)
        "android"
        #elseif os(Linux)
        "linux"
        #elseif os(Windows)
        "windows"
        #else
        "other"
        #endif
    }

    private let store: LocalStore
    private let app: String
    private let appVersion: String
    private let platform: String
    /// One per run of the app (one command of a command-line app).
    public let sessionID: String
    private let limits: Limits
    private let enabled: Atomic<Bool>
    private let logger: Logger

    /// - Parameters:
    ///   - app: the app's name as events carry it (`AnalyticsApp.sustainU.rawValue`, …).
    ///   - isEnabled: false records nothing (the user opted out: `--no-analytics`).
    public init(
        store: LocalStore, app: String, appVersion: String, platform: String = Analytics.currentPlatform,
        isEnabled: Bool = true, limits: Limits = Limits(), sessionID: String = UUIDv7.make(),
        logger: Logger = Logger(label: "eventual.analytics")
    ) {
        self.store = store
        self.app = app
        self.appVersion = appVersion
        self.platform = platform
        self.sessionID = sessionID
        self.limits = limits
        self.enabled = Atomic(isEnabled)
        self.logger = logger
    }

    /// The switch: off, `record` stores nothing (events already waiting stay until sent or discarded).
    public var isEnabled: Bool {
        get { enabled.load(ordering: .relaxed) }
        set { enabled.store(newValue, ordering: .relaxed) }
    }

    /// Stores `event` for the next sync, as happening now (or at `at`, Unix ms, for importers and demos).
    /// Never throws: a usage event must not fail what the person did. The outcome says what happened.
    @discardableResult
    public func record(_ event: AnalyticsEvent, at: Int64? = nil) async -> Outcome {
        guard isEnabled else { return .off }
        if let problem = AnalyticsPrivacy.problem(name: event.name, properties: event.properties) {
            logger.warning("analytics event refused", metadata: ["name": "\(event.name.prefix(64))", "reason": "\(problem)"])
            return .refused(problem)
        }
        let now = UnixMillis.now()
        let time = at ?? now
        let row: AnalyticsRow
        do {
            row = AnalyticsRow(id: UUIDv7.make(millis: time), name: event.name, properties: try JSONEncoder.sorted.encode(event.properties),
                               at: time, app: app, appVersion: appVersion, platform: platform, sessionID: sessionID)
        } catch {
            return .failed("\(error)")
        }
        let limits = self.limits
        do {
            try await store.writer.write { db in
                try AnalyticsTable.insert(row, db: db)
                try AnalyticsTable.prune(maxWaiting: limits.maxWaiting, oldest: now - limits.maxAge.milliseconds, db: db)
            }
            return .recorded(id: row.id)
        } catch {
            logger.warning("analytics event not stored", metadata: ["name": "\(event.name)", "error": "\(error)"])
            return .failed("\(error)")
        }
    }

    /// Stores an event by name, for names outside the vocabulary.
    @discardableResult
    public func record(_ name: String, _ properties: [String: SyncValue] = [:], at: Int64? = nil) async -> Outcome {
        await record(AnalyticsEvent(name: name, properties: properties), at: at)
    }

    /// Waiting, dropped and refused events, for a status screen.
    public func counts() throws -> AnalyticsCounts {
        try store.reader.read { db in
            AnalyticsCounts(waiting: try AnalyticsTable.waiting(db), dropped: try AnalyticsTable.tally(.dropped, db: db),
                            rejected: try AnalyticsTable.tally(.rejected, db: db))
        }
    }

    /// Forgets every waiting event (a person who opts out may not want the earlier ones sent).
    public func discardWaiting() async throws {
        try await store.writer.write { db in try db.execute(sql: "DELETE FROM eventual_events") }
    }
}

/// The device's analytics in numbers.
public struct AnalyticsCounts: Sendable, Equatable {
    /// Recorded, not yet acknowledged by the server.
    public var waiting: Int
    /// Dropped unsent: too many waiting, or too old.
    public var dropped: Int
    /// Refused by the server, not sent again.
    public var rejected: Int

    public init(waiting: Int = 0, dropped: Int = 0, rejected: Int = 0) {
        self.waiting = waiting
        self.dropped = dropped
        self.rejected = rejected
    }
}
