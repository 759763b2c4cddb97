import EventualAPI
import EventualKit
import Foundation

/// The signed-in user's pantry on this device: everything a screen calls once signed in.
public final class UserPantry: Sendable {
    /// The store, the engine, usage events and the outbox, as every app has them.
    public let device: SignedInDevice
    /// The items: add, consume, remove, edit, list, search.
    public let items: PantryStore
    /// Barcode look-ups and contributions.
    public let knowledgeBase: KnowledgeBase
    /// The households the person shares items with, and the one new items go to.
    public let household: Household

    public init(session: Session, host app: PantryApp) throws {
        device = try SignedInDevice(session: session, accounts: app.accounts,
                                    collections: [PantrySchema.items.mirror],
                                    calls: KnowledgeBaseCalls.handlers)
        items = PantryStore(store: device.store, spaces: device.spaces)
        knowledgeBase = KnowledgeBase(store: device.store, client: device.link.client, policy: app.configuration.lookupPolicy,
                                      analytics: device.analytics)
        household = Household(spaces: device.spaces, store: device.store)
    }

    // MARK: - The purchase flow

    /// Puts a scanned product in the pantry: a picked candidate gets +1 (the others −1 with
    /// `downvoteOthers`), a new product is posted. The item enters the pantry at once; the
    /// contributions wait in the outbox until the server can be reached.
    @discardableResult
    public func buy(barcode: String, candidates: [ProductCandidate], choice: ProductChoice,
                    details: ItemDetails = ItemDetails(), space: String? = nil, now: Date = Date()) async throws -> Purchase {
        let gtin = try GTIN(scanned: barcode)
        try details.validate()
        var details = details
        let product: ProductCandidate?
        switch choice {
        case .pick(let number, _):
            guard number >= 1, number <= candidates.count else { throw PantryError.pickOutOfRange(number, count: candidates.count) }
            product = candidates[number - 1]
        case .new(let name, let description):
            guard !name.trimmingCharacters(in: .whitespaces).isEmpty else { throw PantryError.invalidField("A new product needs a name") }
            product = nil
            if details.description == nil { details.description = description }
            if details.name == nil { details.name = name }
        }
        if let product {
            if details.name == nil { details.name = product.name }
            if details.description == nil { details.description = product.description }
        }
        try details.validate()
        let item = PantryItem(id: UUIDv7.make(), details: details, barcode: gtin.normalized, productId: product?.id, boughtAt: UnixMillis.milliseconds(now),
                              space: space)
        let millis = UnixMillis.milliseconds(now)
        let votes = try await store.write { tx -> Int in
            var votes = 0
            switch choice {
            case .new(let name, let description):
                _ = try KnowledgeBase.queueNewProduct(barcode: gtin, name: name, description: description, now: millis, tx)
            case .pick(_, let downvoteOthers):
                if let id = product?.id {
                    try KnowledgeBase.queueVote(barcode: gtin, productId: id, rating: 1, tx)
                    votes += 1
                }
                if downvoteOthers {
                    for other in candidates where other.id != nil && other.id != product?.id && !other.isMine {
                        try KnowledgeBase.queueVote(barcode: gtin, productId: other.id!, rating: -1, tx)
                        votes += 1
                    }
                }
            }
            try PantryStore.insert(item, tx)
            return votes
        }
        switch choice {
        case .new: await analytics.record(.productPosted)
        case .pick(_, let downvoteOthers):
            if product?.id != nil { await analytics.record(.productVoted(rating: 1)) }
            if downvoteOthers && votes > 1 {
                for _ in 1..<votes { await analytics.record(.productVoted(rating: -1)) }
            }
        }
        return Purchase(item: item, product: product, votes: votes, postsNewProduct: product == nil)
    }

    /// Rates a product of the knowledge base from -5 to 5 (0 takes the rating back), queued in
    /// the outbox like a purchase's vote; a newer rating of the product replaces an unsent one.
    public func vote(barcode: String, productId: String, rating: Int) async throws {
        let gtin = try GTIN(scanned: barcode)
        guard KnowledgeBase.ratings.contains(rating) else { throw PantryError.invalidRating(rating) }
        try await store.write { tx in try KnowledgeBase.queueVote(barcode: gtin, productId: productId, rating: rating, tx) }
        await analytics.record(.productVoted(rating: rating))
    }

    // MARK: - Insights

    /// Expired, expiring within `days`, ran out (shopping list) and forgotten items.
    public func reminders(days: Int = 3, now: Date = Date()) throws -> Reminders {
        Reminders.compute(items: try items.allItems(), windowDays: days, now: now)
    }

    /// Where things were bought, most used first.
    public func places() throws -> [Place] {
        Place.summarize(try items.allItems())
    }

    // MARK: - Sync

    /// Online or offline, what waits in the outbox and why, and when the last sync was.
    public func status(probe: Bool = true) async throws -> DeviceStatus { try await device.status(probe: probe) }
}

/// How the user chose the product of a scan.
public enum ProductChoice: Sendable, Equatable {
    /// The n-th candidate (from 1); `downvoteOthers` rates every other one −1.
    case pick(Int, downvoteOthers: Bool = false)
    /// A product the knowledge base does not have yet.
    case new(name: String, description: String?)
}

/// What a scan put in the pantry and queued for the knowledge base.
public struct Purchase: Sendable, Equatable {
    public let item: PantryItem
    /// The candidate picked (nil for a new product).
    public let product: ProductCandidate?
    /// Votes queued.
    public let votes: Int
    /// A new product was queued for posting.
    public let postsNewProduct: Bool
}
