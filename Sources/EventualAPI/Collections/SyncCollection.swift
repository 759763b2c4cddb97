/// The kinds of value a field of a synced record may hold on the wire.
public enum SyncFieldType: String, Sendable, Hashable {
    /// A JSON string.
    case string
    /// A JSON integer (no fraction).
    case integer
    /// A JSON number.
    case number
    /// A JSON boolean.
    case boolean
    /// A calendar day as a `YYYY-MM-DD` string.
    case date
    /// A JSON number that people add to and take from on several devices at once (a pantry
    /// quantity, a balance): a change carries either a delta, and the deltas of every device add
    /// up, or an explicit set, which wins over the deltas stamped before it and keeps those
    /// stamped after it.
    case counter
}

/// One field of a synced collection.
public struct SyncField: Sendable, Hashable {
    public let type: SyncFieldType
    /// Whether `null` is accepted (it clears the field).
    public let nullable: Bool
    /// For strings: the longest value accepted, in characters.
    public let maxLength: Int?
    /// What a record holds in the field when no change set it: a record created by a device of
    /// an earlier version of the app (which does not know the field) takes it on the server, and
    /// a device's column holds it for records stored before the field was added. Nil: null.
    public let defaultValue: SyncValue?
    /// Whether a later version of the app stops writing it: still accepted and served, so that a
    /// device of an earlier version goes on syncing, but new code should not use it.
    public let deprecated: Bool

    public init(_ type: SyncFieldType, nullable: Bool = true, maxLength: Int? = nil, default defaultValue: SyncValue? = nil,
                deprecated: Bool = false) {
        self.type = type
        self.nullable = nullable
        self.maxLength = maxLength
        self.defaultValue = defaultValue
        self.deprecated = deprecated
    }
}

/// Where a collection's records live.
public enum SyncScope: String, Sendable, Hashable {
    /// In the person's own space only (their budgets, their settings).
    case person
    /// In a space: the person's own, or one they share with others (a household's pantry).
    case space
}

/// A collection of records that the sync endpoints carry, with its fields. Both the server
/// (which validates pushes against it) and the apps (which write it) read it from here, so the
/// two cannot drift. Each app declares its collections in a file of its own beside this one and
/// lists them in `SyncCollections.all`.
public struct SyncCollection: Sendable, Hashable {
    public let name: String
    /// The app whose records these are: a shared space holds the records of one app only.
    public let app: AnalyticsApp
    public let fields: [String: SyncField]
    /// Whether a change may name a space other than the person's own.
    public let scope: SyncScope
    /// What its records keep after merging, checked in order (the first broken one is told).
    public let rules: [SyncRule]
    /// Whether a deleted record stays deleted whatever edits of it say (a SpendiQ transaction).
    /// By default a record is last writer wins, field by field: an edit stamped after a deletion
    /// brings the record back. With this, a deletion beats every edit that reaches the server
    /// before it, and an edit that reaches the server after it is refused (`deleted`) whenever it
    /// was made, so that its author hears of it; only the record made again (`creates`, which is
    /// what `settle --keep-mine` sends) brings it back.
    public let deletionIsFinal: Bool

    public init(name: String, app: AnalyticsApp, fields: [String: SyncField], scope: SyncScope = .person, rules: [SyncRule] = [],
                deletionIsFinal: Bool = false) {
        self.name = name
        self.app = app
        self.fields = fields
        self.scope = scope
        self.rules = rules
        self.deletionIsFinal = deletionIsFinal
    }
}
