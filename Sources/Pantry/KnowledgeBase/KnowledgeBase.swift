import EventualAPI
import EventualKit
import Foundation
import GRDB
import Synchronization

/// The shared barcode knowledge base as this device sees it: look-ups through the read cache
/// (so a barcode looked up once can be scanned in a basement), the products this user created,
/// and contributions (new products, votes) queued in the outbox.
public struct KnowledgeBase: Sendable {
    let store: LocalStore
    let cache: ReadCache
    let client: Client
    let policy: CachePolicy
    let analytics: Analytics?

    init(store: LocalStore, client: Client, policy: CachePolicy, analytics: Analytics? = nil) {
        self.store = store
        self.cache = ReadCache(store: store)
        self.client = client
        self.policy = policy
        self.analytics = analytics
    }

    static func cacheKey(_ barcode: GTIN) -> String { "kb:products:\(barcode.normalized)" }

    /// The ratings the knowledge base takes.
    public static let ratings = -5...5

    /// The candidates for `barcode`: from the server when it answers, else from the saved copy;
    /// the user's own products are always included.
    public func lookup(_ barcode: String) async throws -> ProductLookup {
        do {
            let found = try await lookupWithoutRecording(barcode)
            let result: AnalyticsEvent.ScanResult = found.source == .cache ? .offline : found.candidates.isEmpty ? .unknown : .known
            await analytics?.record(.productScanned(result))
            return found
        } catch PantryError.noSavedCopy(let barcode, let silent) {
            await analytics?.record(.productScanned(.offline))
            throw PantryError.noSavedCopy(barcode: barcode, silent: silent)
        }
    }

    private func lookupWithoutRecording(_ barcode: String) async throws -> ProductLookup {
        let gtin = try GTIN(scanned: barcode)
        let client = self.client
        let lastFailure = Mutex<RemoteFailure?>(nil)
        let mine = try myProducts(gtin)
        let saved: Cached<SavedProducts>?
        do {
            saved = try await cache.read(Self.cacheKey(gtin), as: SavedProducts.self, policy: policy) { _ in
                do {
                    return .fresh(try await Self.fetch(gtin, client: client), etag: nil)
                } catch {
                    lastFailure.withLock { $0 = RemoteFailure.from(error) }
                    throw error
                }
            }
        } catch let error as CacheError {
            guard mine.isEmpty else {
                return ProductLookup(barcode: gtin, candidates: mine, source: .cache, fetchedAt: nil)
            }
            if case .unauthorized(let message)? = lastFailure.withLock({ $0 }) {
                throw PantryError.server("Sign in again to look up \(gtin): \(message)")
            }
            if case .rejected(_, let message)? = lastFailure.withLock({ $0 }) { throw PantryError.server(message) }
            throw PantryError.noSavedCopy(barcode: gtin.shortForm, silent: error.serverIsSilent || lastFailure.withLock({ $0 })?.isSilence == true)
        }
        let known = saved?.value.products ?? []
        let knownIDs = Set(known.map(\.id))
        var candidates = known.map {
            ProductCandidate(id: $0.id, localId: nil, name: $0.name, description: $0.description, score: $0.score, isMine: false)
        }
        candidates += mine.filter { $0.id.map { !knownIDs.contains($0) } ?? true }
        candidates.sort { $0.score > $1.score }
        return ProductLookup(barcode: gtin, candidates: candidates, source: saved?.source ?? .cache, fetchedAt: saved?.fetchedAt)
    }

    private static func fetch(_ barcode: GTIN, client: Client) async throws -> Data {
        let list = try await KnowledgeBaseCalls.products(barcode.normalized, client: client)
        let saved = SavedProducts(products: list.products.map {
            SavedProducts.Product(id: $0.id, name: $0.name, description: $0.description, score: $0.score ?? 0)
        })
        return try JSONEncoder().encode(saved)
    }

    /// The barcode of a product on the server, when this device knows it: from an item bought
    /// as that product, or a product this user created.
    public func barcode(ofProduct productId: String) throws -> GTIN? {
        let normalized = try store.reader.read { db in
            try String.fetchOne(db, sql: """
                SELECT barcode FROM pantry_items WHERE productId = ?1 AND barcode IS NOT NULL
                UNION ALL SELECT barcode FROM kb_my_products WHERE serverId = ?1 LIMIT 1
                """, arguments: [productId])
        }
        return normalized.flatMap { try? GTIN($0) }
    }

    /// Products this user created for `barcode`, sent or not.
    func myProducts(_ barcode: GTIN) throws -> [ProductCandidate] {
        try store.reader.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM kb_my_products WHERE barcode = ? ORDER BY createdAt", arguments: [barcode.normalized])
                .map { ProductCandidate(id: $0["serverId"], localId: $0["localId"], name: $0["name"],
                                        description: $0["description"], score: 0, isMine: true) }
        }
    }

    // MARK: - Contributions, inside the purchase's transaction

    /// Records a new product locally and queues its post.
    static func queueNewProduct(barcode: GTIN, name: String, description: String?, now: Int64, _ tx: LocalTransaction) throws -> String {
        let localId = UUIDv7.make()
        try tx.db.execute(sql: """
            INSERT INTO kb_my_products (localId, barcode, name, description, createdAt) VALUES (?, ?, ?, ?, ?)
            """, arguments: [localId, barcode.normalized, name, description, now])
        try tx.enqueueCall(KnowledgeBaseCalls.postProduct,
                           payload: PostProductCall(localId: localId, barcode: barcode.normalized, name: name, description: description))
        return localId
    }

    /// Queues a rating; a newer rating of the same product replaces an unsent older one.
    static func queueVote(barcode: GTIN, productId: String, rating: Int, _ tx: LocalTransaction) throws {
        try tx.enqueueCall(KnowledgeBaseCalls.vote, payload: VoteCall(barcode: barcode.normalized, productId: productId, rating: rating),
                           coalescingKey: "kb.vote:\(productId)")
    }
}
