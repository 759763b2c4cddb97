import CommandLineSupport
import EventualAPI
import EventualKit
import Foundation
import Pantry

/// How items look on screen and in JSON.
enum ItemPrinting {
    /// The items in a table; with `owners` of a person in a household, whose space each is in and who changed it last.
    /// With `states`, a row that waits to be sent or was refused is marked, and a legend says what the marks mean.
    static func table(_ items: [PantryItem], owners: Owners? = nil, states: [String: SyncState] = [:], now: Date = Date()) -> String {
        let today = Day(date: now)
        let shared = owners?.inHousehold == true
        let marks = items.map { SyncMark(states[$0.id] ?? .confirmed) }
        let marked = marks.contains { $0 != .none }
        var table = Table()
        table.headers = (marked ? [""] : []) + ["ID", "NAME", "QTY", "CATEGORY", "EXPIRES", "PLACE"] + (shared ? ["SPACE", "BY"] : [])
        // NB: the rule of every list (the SpendiQ guide's): ids and quantities stay whole; the place
        // and the category give way first, the date last, headers only when nothing else is left.
        table.whole = ["", "ID", "QTY"]
        table.cutFirst = ["PLACE", "CATEGORY"]
        table.cutLast = ["EXPIRES", "BY"]
        for (item, mark) in zip(items, marks) {
            var cells: [Table.Cell] = [.init(String(item.id.suffix(8))), .init(item.name + (item.photo != nil ? " [photo]" : "")), .init(quantity(item)), .init(item.category ?? "-"),
                                       expiry(item.expiresOn, today: today), .init(item.place ?? "-")]
            if let owners, shared { cells += [.init(owners.space(of: item)), .init(owners.changedBy(item))] }
            table.rows.append((marked ? [Table.Cell(mark.rawValue, mark == .refused ? .red : .yellow)] : []) + cells)
        }
        return [table.render(), SyncMark.legend(marks, failures: "pantry failures")].compactMap { $0 }.joined(separator: "\n")
    }

    /// Whose the items are: the names of the person's spaces, and who the person is.
    struct Owners {
        /// Space id to name.
        let names: [String: String]
        let me: String
        /// Whether the person is in a household: only then are SPACE and BY worth their columns.
        let inHousehold: Bool

        init(_ pantry: UserPantry) throws {
            names = try pantry.household.names()
            me = pantry.session.username
            inHousehold = !(try pantry.household.list()).isEmpty
        }

        /// The household's name, or "yours" for the person's own items.
        func space(of item: PantryItem) -> String {
            item.space.map { names[$0] ?? String($0.suffix(8)) } ?? "yours"
        }

        /// "you" for the person's own change (waiting on this device, or the server's), else who.
        func changedBy(_ item: PantryItem) -> String {
            guard let who = item.changedBy, who != me else { return "you" }
            return who
        }
    }

    static func quantity(_ item: PantryItem) -> String {
        let number = Self.number(item.quantity)
        return item.unit.map { "\(number) \($0)" } ?? number
    }

    /// `3` rather than `3.0`, `0.2` rather than `0.19999999999999998` (to `PantryItem.quantityStep`),
    /// and never a trap: a quantity synced from elsewhere may be any double.
    static func number(_ value: Double) -> String {
        let value = PantryItem.rounded(value)
        // NB: `Int(value)` traps beyond Int's range (1e308) and on nan; Int64 is exact below 2^53.
        guard value.isFinite, value.rounded() == value, abs(value) < 9_007_199_254_740_992 else { return String(value) }
        return String(Int64(value))
    }

    /// An item's status as people say it.
    static func status(_ status: PantryItem.Status) -> String {
        switch status {
        case .inPantry: "in the pantry"
        case .consumed: "consumed"
        case .thrownAway: "thrown away"
        }
    }

    static func expiry(_ day: Day?, today: Day) -> Table.Cell {
        guard let day else { return .init("-") }
        let distance = today.days(until: day)
        let colour: Terminal.Colour? = distance < 0 ? .red : distance <= 3 ? .yellow : nil
        // NB: a day further than 99 days either way is its date alone: "(in 2912108 days)" would
        // widen the column, and so narrow every item's name, for a count nobody reads.
        guard abs(distance) <= Self.daysCounted else { return .init(day.description, colour) }
        return .init("\(day) (\(RelativeDay.describe(day, today: today)))", colour)
    }

    /// How far from today a table still counts the days to an expiry.
    static let daysCounted = 99

    static func details(_ item: PantryItem, owners: Owners? = nil, state: SyncState = .confirmed, now: Date = Date()) -> String {
        let today = Day(date: now)
        var lines: [(String, String)] = [("id", item.id), ("name", item.name)]
        if let barcode = item.barcode { lines.append(("barcode", (try? GTIN(barcode).shortForm) ?? barcode)) }
        if let description = item.description { lines.append(("description", description)) }
        lines.append(("quantity", quantity(item)))
        lines.append(("category", item.category ?? "-"))
        lines.append(("expires", item.expiresOn.map { "\($0) (\(RelativeDay.describe($0, today: today)))" } ?? "-"))
        lines.append(("bought", "\(isoDay(item.boughtAt)) (\(RelativeDay.ago(item.boughtAt, now: Int64(now.timeIntervalSince1970 * 1000))))"))
        lines.append(("place", item.place ?? "-"))
        if let latitude = item.latitude, let longitude = item.longitude { lines.append(("at", "\(latitude),\(longitude)")) }
        lines.append(("status", status(item.status)))
        if item.photo != nil { lines.append(("photo", "yes (pantry photo \(item.id.suffix(8)) --save FILE)")) }
        if let owners, owners.inHousehold || item.space != nil {
            lines.append(("space", owners.space(of: item)))
            lines.append(("changed by", owners.changedBy(item)))
        }
        switch state {
        case .confirmed: break
        case .pending: lines.append(("sync", "\(SyncMark.waiting.rawValue) waits to be sent"))
        case .failed(let reason): lines.append(("sync", "\(SyncMark.refused.rawValue) refused by the server: \(reason) (pantry failures)"))
        }
        let width = lines.map(\.0.count).max() ?? 0
        return lines.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }.joined(separator: "\n")
    }

    static func isoDay(_ millis: Int64) -> String {
        Day(date: Date(timeIntervalSince1970: Double(millis) / 1000)).description
    }

    /// The JSON shape of an item: every field present, `null` when unknown. `space` is the
    /// household's name (null: the person's own), `changedBy` who the server last applied a change
    /// of (null while this device's own change waits).
    struct JSONItem: Encodable {
        let item: PantryItem
        let owners: Owners?
        let state: SyncState?

        /// `state`: the item's sync state, as `syncState` (lists and show say it; search and reminders do not).
        init(item: PantryItem, owners: Owners?, state: SyncState? = nil) {
            self.item = item
            self.owners = owners
            self.state = state
        }

        enum Keys: String, CodingKey {
            case id, shortId, barcode, productId, name, description, quantity, unit, category, expiresOn, boughtAt, place
            case latitude, longitude, status, space, spaceId, changedBy, photo, syncState
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(item.id, forKey: .id)
            try container.encode(String(item.id.suffix(8)), forKey: .shortId)
            try container.encode(item.barcode.map { (try? GTIN($0).shortForm) ?? $0 }, forKey: .barcode)
            try container.encode(item.productId, forKey: .productId)
            try container.encode(item.name, forKey: .name)
            try container.encode(item.description, forKey: .description)
            try container.encode(PantryItem.rounded(item.quantity), forKey: .quantity)
            try container.encode(item.unit, forKey: .unit)
            try container.encode(item.category, forKey: .category)
            try container.encode(item.expiresOn?.description, forKey: .expiresOn)
            try container.encode(Timestamp.iso8601(item.boughtAt), forKey: .boughtAt)
            try container.encode(item.place, forKey: .place)
            try container.encode(item.latitude, forKey: .latitude)
            try container.encode(item.longitude, forKey: .longitude)
            try container.encode(item.status.rawValue, forKey: .status)
            try container.encode(item.space.map { owners?.names[$0] ?? $0 }, forKey: .space)
            try container.encode(item.space, forKey: .spaceId)
            try container.encode(item.changedBy, forKey: .changedBy)
            try container.encode(item.photo, forKey: .photo)
            if let state { try container.encode(SyncStateJSON(state), forKey: .syncState) }
        }
    }

    /// A place in JSON: every key present, `null` when unknown.
    struct JSONPlace: Encodable {
        let name: String
        let count: Int
        @JSONNullable var latitude: Double?
        @JSONNullable var longitude: Double?

        init(_ place: Place) {
            name = place.name
            count = place.count
            latitude = place.latitude
            longitude = place.longitude
        }
    }

    /// A product that ran out, in JSON: its time as every time in the apps' JSON.
    struct JSONRanOut: Encodable {
        let name: String
        @JSONNullable var barcode: String?
        let timesBought: Int
        let ranOutAt: String

        init(_ line: Reminders.RanOut) {
            name = line.name
            barcode = line.barcode
            timesBought = line.timesBought
            ranOutAt = Timestamp.iso8601(line.ranOutAt)
        }
    }

    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // NB: JSON has no infinity; a damaged quantity still lists, as a string, rather than failing the listing.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
