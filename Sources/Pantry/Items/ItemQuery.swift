/// What `pantry list` shows: filters and an order.
public struct ItemQuery: Sendable, Equatable {
    public enum Sort: String, Sendable, CaseIterable {
        case expiry, name, category, bought
    }

    public var sort: Sort = .expiry
    /// Only items expiring from today to this many days ahead.
    public var expiringWithinDays: Int?
    /// Only items already expired.
    public var expiredOnly = false
    /// Only this category (case-insensitive).
    public var category: String?
    /// Only places containing this text (case-insensitive).
    public var placeContains: String?
    /// The items that left the pantry (consumed or thrown away) instead of those in it.
    public var finished = false

    public init(sort: Sort = .expiry, expiringWithinDays: Int? = nil, expiredOnly: Bool = false,
                category: String? = nil, placeContains: String? = nil, finished: Bool = false) {
        self.sort = sort
        self.expiringWithinDays = expiringWithinDays
        self.expiredOnly = expiredOnly
        self.category = category
        self.placeContains = placeContains
        self.finished = finished
    }
}
