import Foundation

/// What a device pulls, and in which order: some of its app's collections, each whole or a slice
/// of it by one field, at a priority (0 first). The server sends nothing else: a pantry app never
/// holds its owner's bank transactions.
///
/// Each subscription has its own cursor, so a first sync fills priority 0 before it starts
/// priority 1, and `SyncEngine.synced(priority:)` returns as soon as priority 0 is in (SpendiQ's
/// dashboard needs the accounts and the last 30 days, not ten years of history). Slices of one
/// collection split it with nothing left over and nothing twice (`recentFirst` makes the pair):
/// `atLeast` takes the records whose field holds a value of the bound's type at least the
/// bound, `below` every other one, so a record is in exactly one and moves when its field changes.
public struct SyncSubscription: Sendable, Hashable {
    public let priority: Int
    public let parts: [Part]

    public init(priority: Int, parts: [Part]) {
        self.priority = priority
        self.parts = parts
    }

    public struct Part: Sendable, Hashable {
        public let collection: String
        /// nil for the whole collection.
        public let slice: Slice?

        public init(_ collection: String, slice: Slice? = nil) {
            self.collection = collection
            self.slice = slice
        }
    }

    public struct Slice: Sendable, Hashable {
        public enum Side: Sendable, Hashable { case atLeast, below }

        public let field: String
        public let side: Side
        public let bound: Bound

        public init(field: String, side: Side, bound: Bound) {
            self.field = field
            self.side = side
            self.bound = bound
        }
    }

    public enum Bound: Sendable, Hashable {
        case number(Double)
        case text(String)
        /// Unix milliseconds this long before the device's first pull. NB: fixed then and kept, so
        /// that the two slices of a pair always split on the same value.
        case before(Duration)
    }

    /// Every record of `collections`, at `priority`.
    public static func all(_ collections: [String], priority: Int = 0) -> SyncSubscription {
        SyncSubscription(priority: priority, parts: collections.map { Part($0) })
    }

    /// The records of `collection` whose `field` (Unix milliseconds) is within `window` of the
    /// first sync, with every record of `alongside`, at `priority`; the rest of `collection` at
    /// `priority + 1`.
    public static func recentFirst(_ collection: String, by field: String, within window: Duration,
                                   alongside: [String] = [], priority: Int = 0) -> [SyncSubscription] {
        [
            SyncSubscription(priority: priority, parts: alongside.map { Part($0) }
                + [Part(collection, slice: Slice(field: field, side: .atLeast, bound: .before(window)))]),
            SyncSubscription(priority: priority + 1,
                             parts: [Part(collection, slice: Slice(field: field, side: .below, bound: .before(window)))]),
        ]
    }

    /// The collections it names.
    public var collections: Set<String> { Set(parts.map(\.collection)) }

    /// What the engine keys its cursor by: the same subscriptions in a later version of the app
    /// go on from where they were; a changed one starts again.
    var key: String {
        "p\(priority):" + parts.map { part in
            guard let slice = part.slice else { return part.collection }
            let bound = switch slice.bound {
            case .number(let value): "\(value)"
            case .text(let value): "'\(value)'"
            case .before(let window): "recent\(window.components.seconds)s"
            }
            return "\(part.collection)[\(slice.field)\(slice.side == .atLeast ? ">=" : "<")\(bound)]"
        }.joined(separator: ",")
    }

    /// The `collection` values of its pulls, a moving bound fixed at `now` (Unix milliseconds).
    func query(now: Int64) -> [String] {
        parts.map { part in
            guard let slice = part.slice else { return part.collection }
            let bound = switch slice.bound {
            case .number(let value): Int64(exactly: value).map(String.init) ?? "\(value)"
            case .text(let value): value
            case .before(let window): String(now - window.milliseconds)
            }
            return "\(part.collection):\(slice.field)\(slice.side == .atLeast ? ">=" : "<")\(bound)"
        }
    }
}

/// How far a first sync of one priority has come. `received` and `total` only ever rise while it
/// runs; `total` is the server's count of what the subscriptions had still to send plus what came.
public struct PullProgress: Sendable, Equatable {
    public let priority: Int
    public var received: Int
    public var total: Int
    /// Every subscription of this priority has pulled everything once.
    public var isComplete: Bool
    /// Unix milliseconds of the last page written (0 before any).
    public var updatedAt: Int64

    public init(priority: Int, received: Int = 0, total: Int = 0, isComplete: Bool = false, updatedAt: Int64 = 0) {
        self.priority = priority
        self.received = received
        self.total = total
        self.isComplete = isComplete
        self.updatedAt = updatedAt
    }

    /// The first sync of `priorities`, summed, while some of it has still to come; nil once done
    /// (or when the app subscribes to nothing).
    public static func underWay(_ priorities: [PullProgress]) -> PullProgress? {
        guard priorities.contains(where: { !$0.isComplete }) else { return nil }
        return priorities.reduce(into: PullProgress(priority: 0)) { sum, progress in
            sum.received += progress.received
            sum.total += progress.total
            sum.updatedAt = max(sum.updatedAt, progress.updatedAt)
        }
    }

    /// From 0 to 1; 1 once complete.
    public var fraction: Double {
        if isComplete { return 1 }
        guard total > 0 else { return 0 }
        return min(1, Double(received) / Double(total))
    }
}
