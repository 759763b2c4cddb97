import EventualAPI
import EventualKit
import Foundation
import GRDB

/// The user's pantry in their database: writes named after what a person does, each applied
/// and queued for the server in one transaction, and the reads a screen needs.
public struct PantryStore: Sendable {
    let store: LocalStore
    let calendar: Calendar
    /// The spaces the person is in, to refuse on the device what the server would refuse: a
    /// viewer's change to a household's item (nil: no such check).
    let spaces: Spaces?

    init(store: LocalStore, spaces: Spaces? = nil, calendar: Calendar = .current) {
        self.store = store
        self.spaces = spaces
        self.calendar = calendar
    }

    // MARK: - Writes

    /// Puts a new item in the pantry: the person's own, or a household's (`space`).
    @discardableResult
    /// `photo`: a photo of the item (`Attachments.prepare(fileAt:)`), referred to by the item and
    /// its upload queued in the same local transaction.
    public func add(_ details: ItemDetails, space: String? = nil, photo: PreparedAttachment? = nil, now: Date = Date()) async throws
        -> PantryItem {
        try details.validate()
        guard details.name != nil else { throw PantryError.invalidField("An item needs a name") }
        let item = PantryItem(id: UUIDv7.make(), details: details, barcode: nil, productId: nil, boughtAt: UnixMillis.milliseconds(now),
                              space: space)
        try await store.write { tx in try Self.insert(item, photo: photo, tx) }
        return item
    }

    /// Inserts `item` and queues it, inside a caller's transaction, with the upload of its photo.
    static func insert(_ item: PantryItem, photo: PreparedAttachment? = nil, _ tx: LocalTransaction) throws {
        var item = item
        if let photo { item.photo = try tx.queueUpload(photo, space: item.space).stringValue }
        try PantrySchema.items.insert(item, space: item.space, in: tx)
    }

    /// The photo of an item (its id or 8-character id), and the space it is in; nil when it has none.
    public func photo(of id: String) throws -> (item: PantryItem, photo: AttachmentReference?) {
        let item = try self.item(id)
        let text = try store.reader.read { db in
            try String.fetchOne(db, sql: "SELECT photo FROM pantry_items WHERE id = ?", arguments: [item.id])
        }
        return (item, text.flatMap(AttachmentReference.init(parsing:)))
    }

    /// Uses up `quantity` of an item (all of it when nil); at zero it leaves the pantry.
    ///
    /// A partial use is a delta of the quantity counter, so uses on two devices both count; using
    /// the rest is an explicit set to zero (the person means "it is gone", however much another
    /// device took meanwhile).
    @discardableResult
    public func consume(_ id: String, quantity: Double? = nil, now: Date = Date()) async throws -> PantryItem {
        if let quantity { try ItemDetails.checkQuantity(quantity) }
        let item = try inPantry(id)
        try checkWritable(item)
        let used = min(quantity ?? item.quantity, item.quantity)
        let millis = UnixMillis.milliseconds(now)
        return try await store.write { tx in
            // NB: what is left below the quantity step (0.3 - 0.1 - 0.2) is nothing: the item is finished.
            if PantryItem.isNothing(item.quantity - used) {
                return try PantrySchema.items.update(item.id, in: tx) { item in
                    item.quantity = 0
                    item.status = .consumed
                    item.finishedAt = millis
                    item.touchedAt = millis
                } ?? item
            }
            return try PantrySchema.items.add(-used, to: \.quantity, of: item.id, in: tx) { $0.touchedAt = millis } ?? item
        }
    }

    /// Throws an item away: it leaves the pantry without being eaten.
    @discardableResult
    public func remove(_ id: String, now: Date = Date()) async throws -> PantryItem {
        let item = try inPantry(id)
        try checkWritable(item)
        let millis = UnixMillis.milliseconds(now)
        return try await store.write { tx in
            try PantrySchema.items.update(item.id, in: tx) { item in
                item.status = .thrownAway
                item.finishedAt = millis
                item.touchedAt = millis
            } ?? item
        }
    }

    /// Brings an item consumed or thrown away back into the pantry, as it was when it left (with
    /// `quantity`, how much is there now). Its change sets the status, so it also carries an edit
    /// past the rule that an item out of the pantry takes none (`SyncRule.editableWhile`).
    @discardableResult
    public func restore(_ id: String, quantity: Double? = nil, now: Date = Date()) async throws -> PantryItem {
        if let quantity { try ItemDetails.checkQuantity(quantity) }
        let item = try item(id)
        guard item.status != .inPantry else { throw PantryError.alreadyInPantry(item.name) }
        try checkWritable(item)
        let millis = UnixMillis.milliseconds(now)
        return try await store.write { tx in
            try PantrySchema.items.update(item.id, in: tx) { item in
                item.status = .inPantry
                item.finishedAt = nil
                item.touchedAt = millis
                if let quantity { item.quantity = quantity }
            } ?? item
        }
    }

    /// Deletes an item for good, on every device of its space: unlike `remove` and `consume`,
    /// nothing of it is left (the shopping list forgets it too), and it frees its place under its
    /// owner's record quota at once. Returns it as it was.
    @discardableResult
    public func delete(_ id: String) async throws -> PantryItem {
        let item = try item(id)
        try checkWritable(item)
        try await store.write { tx in _ = try PantrySchema.items.delete(item.id, in: tx) }
        return item
    }

    /// Deletes for good every item used up or thrown away (`delete`) that the person may change,
    /// those of a household they only view and those in `except` left as they are; returns what went.
    @discardableResult
    public func deleteGone(except: Set<String> = []) async throws -> [PantryItem] {
        let gone = try await store.reader.read { db in
            try PantryItem.fetchAll(db, sql: "SELECT * FROM pantry_items WHERE status != ?", arguments: [PantryItem.Status.inPantry.rawValue])
        }
        let writable = try gone.filter { try !except.contains($0.id) && spaces?.viewedOnly($0.space) == nil }
        try await store.write { tx in
            for item in writable { _ = try PantrySchema.items.delete(item.id, in: tx) }
        }
        return writable
    }

    /// Changes the given details of an item; `clearExpiry` forgets its expiry.
    @discardableResult
    /// `photo`: a new photo of the item, its upload queued with the change.
    public func edit(_ id: String, _ details: ItemDetails, clearExpiry: Bool = false, photo: PreparedAttachment? = nil,
                     now: Date = Date()) async throws -> PantryItem {
        try details.validate()
        let current = try item(id)
        // NB: the server refuses such an edit too (`SyncRule.editableWhile`): said here, before anything is queued.
        guard current.status == .inPantry else { throw PantryError.finishedItem(current.name, id: current.id) }
        try checkWritable(current)
        try await store.write { tx in
            let photo = try photo.map { try tx.queueUpload($0, space: current.space).stringValue }
            try PantrySchema.items.update(current.id, in: tx) { item in
                item.touchedAt = UnixMillis.milliseconds(now)
                if let name = details.name { item.name = name }
                if let description = details.description { item.description = description }
                if let quantity = details.quantity { item.quantity = quantity }
                if let unit = details.unit { item.unit = unit }
                if let category = details.category { item.category = category }
                if let expiresOn = details.expiresOn { item.expiresOn = expiresOn }
                if clearExpiry { item.expiresOn = nil }
                if let place = details.place { item.place = place }
                if let position = details.position {
                    item.latitude = position.latitude
                    item.longitude = position.longitude
                }
                if let photo { item.photo = photo }
            }
        }
        return try item(current.id)
    }

    /// Refuses a change of an item in a household the person only views, before anything is
    /// written or queued (the server would refuse it). A space this device does not know yet is
    /// the server's to judge.
    private func checkWritable(_ item: PantryItem) throws {
        if let space = try spaces?.viewedOnly(item.space) { throw PantryError.viewerOf(space.name) }
    }

    // MARK: - Reads

    /// The item whose id is `id`, or ends or starts with it (ids are long; a list shows their last 8 characters).
    public func item(_ id: String) throws -> PantryItem {
        let trimmed = id.trimmingCharacters(in: .whitespaces).lowercased()
        guard !trimmed.isEmpty else { throw PantryError.emptyItemID }
        let matches = try store.reader.read { db in
            if let exact = try PantryItem.fetchOne(db, sql: "SELECT * FROM pantry_items WHERE id = ?", arguments: [trimmed]) {
                return [exact]
            }
            // NB: a part of an id picks an item only when it is as long as lists show: `remove 8`
            // must not throw away whichever item happens to be the only one ending in 8.
            guard trimmed.count >= Self.shownIDLength else { return [] }
            return try PantryItem.fetchAll(db, sql: """
                SELECT * FROM pantry_items
                WHERE substr(id, -length(?1)) = ?1 OR substr(id, 1, length(?1)) = ?1 LIMIT 2
                """, arguments: [trimmed])
        }
        guard matches.count == 1 else {
            if matches.isEmpty, trimmed.count < Self.shownIDLength { throw PantryError.itemIDTooShort(id) }
            throw matches.isEmpty ? PantryError.noSuchItem(id) : PantryError.ambiguousItem(id, matches: matches.count)
        }
        return matches[0]
    }

    /// The characters of an id that lists show (its last 8).
    public static let shownIDLength = 8

    private func inPantry(_ id: String) throws -> PantryItem {
        let item = try item(id)
        guard item.status == .inPantry else { throw PantryError.itemNotInPantry(item.name) }
        return item
    }

    /// The items in the pantry that match `query`.
    public func list(_ query: ItemQuery = ItemQuery(), now: Date = Date()) throws -> [PantryItem] {
        let fetch = fetch(query, now: now)
        return try store.reader.read { db in try fetch(db) }
    }

    /// Each item's sync state: confirmed, waiting to be sent, or refused with the server's words.
    public func syncStates(of items: [PantryItem]) throws -> [String: SyncState] {
        try store.syncStates(PantryItem.collection, ids: items.map(\.id))
    }

    /// The items matching `query` with their sync states now, then again at each committed change
    /// of them or of their states (a sync from another device included). Cancel the iterating task to stop.
    public func watch(_ query: ItemQuery = ItemQuery(), now: Date = Date()) -> AsyncThrowingStream<LiveSnapshot<PantryItem>, any Error> {
        store.observe(PantrySchema.items.mirror, id: { $0.id }, fetch: fetch(query, now: now))
    }

    /// The read of `list`, for a transaction of the caller's or a live query.
    private func fetch(_ query: ItemQuery, now: Date) -> @Sendable (Database) throws -> [PantryItem] {
        var conditions = [query.finished ? "status <> 'inPantry'" : "status = 'inPantry'"]
        var arguments: [String] = []
        let today = Day(date: now, calendar: calendar)
        if let days = query.expiringWithinDays {
            conditions.append("expiresOn >= ? AND expiresOn <= ?")
            arguments += [today.description, today.adding(days: days, calendar: calendar).description]
        }
        if query.expiredOnly {
            conditions.append("expiresOn < ?")
            arguments.append(today.description)
        }
        if let category = query.category {
            conditions.append("category = ? COLLATE NOCASE")
            arguments.append(category)
        }
        if let place = query.placeContains {
            conditions.append("instr(lower(place), lower(?)) > 0")
            arguments.append(place)
        }
        let order = switch query.sort {
        case .expiry: "expiresOn IS NULL, expiresOn, name COLLATE NOCASE"
        case .name: "name COLLATE NOCASE, expiresOn"
        case .category: "category IS NULL, category COLLATE NOCASE, name COLLATE NOCASE"
        case .bought: "boughtAt DESC, name COLLATE NOCASE"
        }
        let sql = "SELECT * FROM pantry_items WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(order)"
        return { [arguments] db in try PantryItem.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)) }
    }

    /// Full-text search over name, description, category and place of the items in the pantry,
    /// newest first. Every word must match; the last one may be the start of a word.
    // NB: newest first rather than by bm25 rank: ranking scores every match, which a common word
    // in a large pantry makes ten times slower than the 2 ms a keystroke can wait.
    public func search(_ text: String, limit: Int = 50) throws -> [PantryItem] {
        guard let match = Self.matchExpression(text) else { return [] }
        return try store.reader.read { db in
            try PantryItem.fetchAll(db, sql: """
                SELECT pantry_items.* FROM pantry_items
                WHERE rowid IN (SELECT rowid FROM pantry_items_fts WHERE pantry_items_fts MATCH ? ORDER BY rowid DESC LIMIT ?)
                ORDER BY rowid DESC
                """, arguments: [match, limit])
        }
    }

    /// Turns what a person typed into an FTS5 query that cannot be a syntax error.
    static func matchExpression(_ text: String) -> String? {
        let words = text.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init)
        guard !words.isEmpty else { return nil }
        return words.enumerated().map { index, word in
            index == words.count - 1 ? "\"\(word)\"*" : "\"\(word)\""
        }.joined(separator: " ")
    }

    /// Every item, in the pantry or not, for reminders and places.
    func allItems() throws -> [PantryItem] {
        try store.reader.read { db in try PantryItem.fetchAll(db, sql: "SELECT * FROM pantry_items") }
    }
}
