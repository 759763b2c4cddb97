/// The usage events of the three apps: every name and property key that the business questions
/// need, in one place. The apps record them (`analytics.record(.mapOpened(from: .navbar))`), the
/// server files them and its questions' SQL reads them by these names.
///
/// An event's name is shared by every app that records it (`app_opened`, `login`); which app
/// recorded it travels beside it, with the app's version, the platform and the session.
public struct AnalyticsEvent: Sendable, Hashable {
    /// `snake_case`, as the server's questions spell it.
    public let name: String
    /// Text, numbers and flags only: never an email, a password, a token, a photo or an exact
    /// position (`AnalyticsPrivacy` refuses those).
    public let properties: [String: SyncValue]

    /// Any event, for names outside the vocabulary (a newer app); prefer the named makers below.
    public init(name: String, properties: [String: SyncValue] = [:]) {
        self.name = name
        self.properties = properties
    }
}

/// Every event name, and the property keys each carries.
public enum AnalyticsName {
    // Every app
    public static let appOpened = "app_opened"
    public static let login = "login"
    /// Recorded by the engine, not an app: events the device dropped unsent (`count`).
    public static let eventsDropped = "events_dropped"

    // SustainU
    public static let notificationShown = "notification_shown"
    public static let notificationOpened = "notification_opened"
    public static let mapOpened = "map_opened"
    public static let pointVisited = "point_visited"
    public static let scanStarted = "scan_started"
    public static let scanAnswered = "scan_answered"
    public static let tipOpened = "tip_opened"
    public static let tipClosed = "tip_closed"

    // SpendiQ
    public static let dashboardOpened = "dashboard_opened"
    public static let offersOpened = "offers_opened"
    public static let offerViewed = "offer_viewed"
    public static let insightShown = "insight_shown"
    public static let limitExceeded = "limit_exceeded"
    public static let transactionRecorded = "transaction_recorded"

    // Tracking My Pantry
    public static let productScanned = "product_scanned"
    public static let productPosted = "product_posted"
    public static let productVoted = "product_voted"
}

/// Property keys.
public enum AnalyticsKey {
    public static let kind = "kind"
    public static let source = "source"
    public static let pointID = "point_id"
    public static let durationMs = "duration_ms"
    public static let trashType = "trash_type"
    public static let seconds = "seconds"
    public static let mode = "mode"
    public static let offerID = "offer_id"
    public static let shop = "shop"
    public static let insight = "insight"
    public static let category = "category"
    public static let amountMinor = "amount_minor"
    public static let currency = "currency"
    public static let result = "result"
    public static let rating = "rating"
    public static let count = "count"
    /// A position rounded to about 100 m (`AnalyticsPrivacy.area(latitude:longitude:)`).
    public static let area = "area"
}

/// What the server files in an event's three indexed columns, so that every question is plain
/// SQL over columns on SQLite and PostgreSQL alike (no JSON functions, which differ): `subject`
/// (what the question groups by), `qualifier` (a second grouping) and `amount` (what it adds up).
public struct AnalyticsColumns: Sendable, Hashable {
    public let subject: String?
    public let qualifier: String?
    public let amount: String?

    /// The keys of an event named `name` that fill the columns; none for a name outside the vocabulary.
    public static func of(_ name: String) -> AnalyticsColumns {
        typealias K = AnalyticsKey
        switch name {
        case AnalyticsName.notificationShown, AnalyticsName.notificationOpened: return .init(K.kind)
        case AnalyticsName.mapOpened: return .init(K.source)
        case AnalyticsName.pointVisited: return .init(K.pointID)
        case AnalyticsName.scanAnswered: return .init(K.trashType, amount: K.durationMs)
        case AnalyticsName.tipOpened: return .init(K.trashType)
        case AnalyticsName.tipClosed: return .init(K.trashType, amount: K.seconds)
        case AnalyticsName.offersOpened: return .init(K.mode)
        case AnalyticsName.offerViewed: return .init(K.shop, qualifier: K.offerID)
        case AnalyticsName.insightShown: return .init(K.insight)
        case AnalyticsName.limitExceeded: return .init(K.category)
        case AnalyticsName.transactionRecorded: return .init(K.kind, qualifier: K.currency, amount: K.amountMinor)
        case AnalyticsName.productScanned: return .init(K.result)
        case AnalyticsName.productVoted: return .init(nil, amount: K.rating)
        case AnalyticsName.eventsDropped: return .init(nil, amount: K.count)
        default: return .init(nil)
        }
    }

    init(_ subject: String?, qualifier: String? = nil, amount: String? = nil) {
        self.subject = subject
        self.qualifier = qualifier
        self.amount = amount
    }
}

// MARK: - The makers the apps call: one line each

extension AnalyticsEvent {
    /// The app came to the foreground (the platform travels with every event).
    public static let appOpened = AnalyticsEvent(name: AnalyticsName.appOpened)
    /// A person signed in (online or offline).
    public static let login = AnalyticsEvent(name: AnalyticsName.login)

    // MARK: SustainU

    /// Notifications SustainU shows.
    public enum Notification: String, Sendable { case dailyReminder = "daily_reminder" }
    /// Where the map was entered from: the navigation bar (`sustainu points`) or the main page
    /// (a point's link, `sustainu point ID`).
    public enum MapSource: String, Sendable { case navbar, main }

    public static func notificationShown(_ notification: Notification) -> AnalyticsEvent {
        AnalyticsEvent(name: AnalyticsName.notificationShown, properties: [AnalyticsKey.kind: .string(notification.rawValue)])
    }

    public static func notificationOpened(_ notification: Notification) -> AnalyticsEvent {
        AnalyticsEvent(name: AnalyticsName.notificationOpened, properties: [AnalyticsKey.kind: .string(notification.rawValue)])
    }

    public static func mapOpened(from source: MapSource) -> AnalyticsEvent {
        AnalyticsEvent(name: AnalyticsName.mapOpened, properties: [AnalyticsKey.source: .string(source.rawValue)])
    }

    public static func pointVisited(_ pointID: String) -> AnalyticsEvent {
        AnalyticsEvent(name: AnalyticsName.pointVisited, properties: [AnalyticsKey.pointID: .string(pointID)])
    }

    public static let scanStarted = AnalyticsEvent(name: AnalyticsName.scanStarted)

    /// A scan got its recommendation `duration` after it started.
    public static func scanAnswered(trashType: String, after duration: Duration) -> AnalyticsEvent {
        AnalyticsEvent(name: AnalyticsName.scanAnswered, properties: [
            AnalyticsKey.trashType: .string(trashType), AnalyticsKey.durationMs: .integer(duration.milliseconds),
        ])
    }

    public static func tipOpened(trashType: String) -> AnalyticsEvent {
        AnalyticsEvent(name: AnalyticsName.tipOpened, properties: [AnalyticsKey.trashType: .string(trashType)])
    }

    /// A tip was closed after being read for `duration`.
    public static func tipClosed(trashType: String, after duration: Duration) -> AnalyticsEvent {
        AnalyticsEvent(name: AnalyticsName.tipClosed, properties: [
            AnalyticsKey.trashType: .string(trashType), AnalyticsKey.seconds: .number(Double(duration.milliseconds) / 1000),
        ])
    }

    // MARK: SpendiQ

    public enum TransactionKind: String, Sendable { case expense, income }

    public static let dashboardOpened = AnalyticsEvent(name: AnalyticsName.dashboardOpened)

    /// The offers list was shown from the network (`online`) or from the cache.
    public static func offersOpened(online: Bool) -> AnalyticsEvent {
        AnalyticsEvent(name: AnalyticsName.offersOpened, properties: [AnalyticsKey.mode: .string(online ? "online" : "offline")])
    }

    public static func offerViewed(_ offerID: String, shop: String) -> AnalyticsEvent {
        AnalyticsEvent(name: AnalyticsName.offerViewed, properties: [
            AnalyticsKey.offerID: .string(offerID), AnalyticsKey.shop: .string(shop),
        ])
    }

    public static func insightShown(_ insight: String) -> AnalyticsEvent {
        AnalyticsEvent(name: AnalyticsName.insightShown, properties: [AnalyticsKey.insight: .string(insight)])
    }

    public static func limitExceeded(category: String) -> AnalyticsEvent {
        AnalyticsEvent(name: AnalyticsName.limitExceeded, properties: [AnalyticsKey.category: .string(category)])
    }

    /// An expense or income of `amountMinor` (cents, pesos: the currency's minor unit) was recorded.
    public static func transactionRecorded(_ kind: TransactionKind, amountMinor: Int64, currency: String) -> AnalyticsEvent {
        AnalyticsEvent(name: AnalyticsName.transactionRecorded, properties: [
            AnalyticsKey.kind: .string(kind.rawValue), AnalyticsKey.amountMinor: .integer(amountMinor),
            AnalyticsKey.currency: .string(currency),
        ])
    }

    // MARK: Tracking My Pantry

    /// What a barcode scan found: a product the knowledge base knows, none, or no answer (offline).
    public enum ScanResult: String, Sendable { case known, unknown, offline }

    public static func productScanned(_ result: ScanResult) -> AnalyticsEvent {
        AnalyticsEvent(name: AnalyticsName.productScanned, properties: [AnalyticsKey.result: .string(result.rawValue)])
    }

    public static let productPosted = AnalyticsEvent(name: AnalyticsName.productPosted)

    public static func productVoted(rating: Int) -> AnalyticsEvent {
        AnalyticsEvent(name: AnalyticsName.productVoted, properties: [AnalyticsKey.rating: .integer(Int64(rating))])
    }
}
