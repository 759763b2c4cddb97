import EventualAPI
import Foundation

/// What the daily notification would say.
public struct Reminders: Sendable, Equatable, Codable {
    /// A product that ran out: a shopping-list line.
    public struct RanOut: Sendable, Equatable, Codable {
        public let name: String
        public let barcode: String?
        /// How many times it was bought.
        public let timesBought: Int
        /// Unix milliseconds when the last one ran out.
        public let ranOutAt: Int64
    }

    /// In the pantry past their expiry.
    public let expired: [PantryItem]
    /// Expiring from today to the end of the window.
    public let expiringSoon: [PantryItem]
    /// Used up in the last 30 days, none left (thrown away is not run out).
    public let shoppingList: [RanOut]
    /// Untouched for more than 60 days.
    public let forgotten: [PantryItem]

    public var isEmpty: Bool { expired.isEmpty && expiringSoon.isEmpty && shoppingList.isEmpty && forgotten.isEmpty }

    /// Works the reminders out of every item the user ever had.
    public static func compute(items: [PantryItem], windowDays: Int, now: Date, calendar: Calendar = .current) -> Reminders {
        let today = Day(date: now, calendar: calendar)
        let horizon = today.adding(days: windowDays, calendar: calendar)
        let nowMillis = UnixMillis.milliseconds(now)
        let inPantry = items.filter { $0.status == .inPantry }
        let byExpiry: (PantryItem, PantryItem) -> Bool = { ($0.expiresOn!, $0.name) < ($1.expiresOn!, $1.name) }
        let expired = inPantry.filter { $0.expiresOn.map { $0 < today } ?? false }.sorted(by: byExpiry)
        let soon = inPantry.filter { $0.expiresOn.map { $0 >= today && $0 <= horizon } ?? false }.sorted(by: byExpiry)
        let sixtyDays: Int64 = 60 * 86_400_000
        let forgotten = inPantry.filter { ($0.touchedAt ?? $0.boughtAt) < nowMillis - sixtyDays }.sorted { $0.boughtAt < $1.boughtAt }

        // NB: a product is the same product by barcode when it has one, else by its name.
        let productKey: (PantryItem) -> String = { $0.barcode ?? "name:" + $0.name.lowercased() }
        let thirtyDays: Int64 = 30 * 86_400_000
        var shopping: [RanOut] = []
        for (_, group) in Dictionary(grouping: items, by: productKey) {
            // NB: what ran out once is on the list too: a person who used up the only pack of
            // flour needs flour, habit or not.
            guard !group.contains(where: { $0.status == .inPantry }) else { continue }
            let lastOut = group.compactMap { $0.status == .consumed ? $0.finishedAt : nil }.max()
            guard let lastOut, lastOut >= nowMillis - thirtyDays else { continue }
            let latest = group.max { $0.boughtAt < $1.boughtAt }!
            shopping.append(RanOut(name: latest.name, barcode: latest.barcode, timesBought: group.count, ranOutAt: lastOut))
        }
        shopping.sort { ($0.ranOutAt, $0.name) > ($1.ranOutAt, $1.name) }
        return Reminders(expired: expired, expiringSoon: soon, shoppingList: shopping, forgotten: forgotten)
    }
}
