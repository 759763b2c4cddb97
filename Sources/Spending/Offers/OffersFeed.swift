import EventualAPI
import EventualKit
import Foundation
import GRDB

/// An offer as the person sees it: distance computed on the device, and why it is shown to them.
public struct OfferView: Sendable, Equatable, Codable {
    public let id: String
    /// The shop's name.
    public let name: String
    public let title: String
    public let shopType: String
    public let category: String
    public let discountPercent: Int?
    public let distanceMeters: Int
    public let featured: Bool
    public let demo: Bool
    public let latitude: Double
    public let longitude: Double
    /// Why this person sees it, from their own spending (the original app's `recommendationReason`).
    public let recommendationReason: String
}

/// What the offers screen shows.
public struct OffersResult: Sendable, Equatable {
    public let offers: [OfferView]
    /// The server could not be reached: the saved list is shown as it was (`note` says so).
    public let stale: Bool
    /// Unix milliseconds when the server sent the list.
    public let fetchedAt: Int64
    /// "Offline: offers from 14:02 cannot be updated" when the saved list is shown offline.
    public let note: String?
    /// How many offers lie within the radius: more than `offers.count` when the list was cut.
    public let total: Int
}

/// The list kept for offline use: the server's answer and the point it was asked about.
struct OfferPage: Codable, Sendable {
    let latitude: Double
    let longitude: Double
    let radius: Int
    let offers: [Components.Schemas.Offer]
    /// The most offers asked for, and how many the server had (nil in lists saved before they were kept).
    let limit: Int?
    let total: Int?

    /// Whether this page holds every offer within `radius` the first `limit` would.
    func answers(radius: Int, limit: Int) -> Bool {
        let whole = (total ?? offers.count) <= offers.count
        return self.radius >= radius && (whole || (self.radius == radius && (self.limit ?? OffersFeed.defaultLimit) >= limit))
    }
}

/// Offers of shops near the person (seed 003): whenever the server cannot be reached (as the
/// engine's connectivity knows, whatever the saved list's age), the saved list under a note
/// that says so; online, the saved list while it is younger than 10 minutes, else a fresh one;
/// with no saved list and no network, "Connect to load offers near you".
public struct OffersFeed: Sendable {
    static let cacheKey = "spending.offers"
    /// A saved list asked about a point further than this from the person is asked again.
    static let samePlace = 250.0
    /// The most offers a list holds unless the person asks for more (the server's default).
    public static let defaultLimit = 200

    let cache: ReadCache
    let link: ServerLink
    let ledger: Ledger
    let configuration: SpendingConfiguration
    let engine: SyncEngine

    /// Offers within `radius` metres of `position`, featured first, then nearest.
    public func offers(near position: GeoPosition, radius: Int = 1000, limit: Int = defaultLimit) async throws -> OffersResult {
        guard (1...20_000).contains(radius) else { throw SpendingError.invalidRadius(radius) }
        guard (1...1000).contains(limit) else { throw SpendingError.invalidOfferLimit(limit) }
        let now = configuration.clock()
        let saved = try cache.peek(Self.cacheKey, as: OfferPage.self)
        let connectivity = await engine.connectivity
        if let saved, now - saved.fetchedAt < configuration.offersMaxAge.milliseconds, now >= saved.fetchedAt, saved.value.answers(radius: radius, limit: limit),
           GeoPosition(latitude: saved.value.latitude, longitude: saved.value.longitude).distance(to: position) <= Self.samePlace {
            // NB: a young list needs no request, but the person must still learn they are offline.
            let online = connectivity.current == .online
                ? true : await connectivity.check(within: configuration.localCommandSyncBudget) == .online
            return try present(saved.value, fetchedAt: saved.fetchedAt, from: position, radius: radius, limit: limit, offline: !online)
        }
        do {
            // NB: with a saved list to show, a silent server costs the local budget, not the read's
            // 4 s, and nothing once this process found it silent or unreachable.
            if saved != nil, connectivity.foundOffline { throw RemoteFailure.unreachable("found offline before") }
            let wait = saved == nil ? configuration.networkReadTimeout : configuration.localCommandSyncBudget
            let page = try await fetch(position, radius: radius, limit: limit, within: wait)
            connectivity.reportAnswer()
            try cache.put(Self.cacheKey, value: page, fetchedAt: now)
            return try present(page, fetchedAt: now, from: position, radius: radius, limit: limit, offline: false)
        } catch let failure as RemoteFailure {
            guard case .unreachable = failure else { throw SpendingError.server(failure.description) }
            connectivity.reportTransportFailure()
            guard let saved else { throw failure.isSilence ? SpendingError.notAnswering("offers") : SpendingError.offersNeedConnection }
            return try present(saved.value, fetchedAt: saved.fetchedAt, from: position, radius: radius, limit: limit, offline: true)
        }
    }

    /// The list shown last (the saved one), about the point and radius it was asked for, without a
    /// request; nil when none was shown on this device.
    public func lastList() throws -> OffersResult? {
        guard let saved = try cache.peek(Self.cacheKey, as: OfferPage.self) else { return nil }
        let page = saved.value
        return try present(page, fetchedAt: saved.fetchedAt, from: GeoPosition(latitude: page.latitude, longitude: page.longitude),
                           radius: page.radius, limit: max(page.offers.count, 1), offline: false)
    }

    /// Refreshes the saved list every 10 minutes while the app shows offers (seed 003), for as
    /// long as the calling task runs; `position` is asked each time (nil: skip this round).
    public func keepFresh(radius: Int = 1000, position: @Sendable () async -> GeoPosition?,
                          shown: @Sendable (OffersResult) async -> Void) async {
        while !Task.isCancelled {
            if let position = await position(), let result = try? await offers(near: position, radius: radius) { await shown(result) }
            try? await Task.sleep(for: configuration.offersMaxAge)
        }
    }

    private func fetch(_ position: GeoPosition, radius: Int, limit: Int, within wait: Duration) async throws -> OfferPage {
        let client = link.client
        let near = "\(position.latitude),\(position.longitude)"
        let answer: Operations.GetOffers.Output
        do {
            answer = try await withTimeLimit(wait) {
                try await client.getOffers(query: .init(near: near, radius: radius, limit: limit))
            }
        } catch {
            throw RemoteFailure.from(error)
        }
        switch answer {
        case .ok(let ok):
            let list = try ok.body.json
            return OfferPage(latitude: position.latitude, longitude: position.longitude, radius: radius, offers: list.offers, limit: limit, total: list.total)
        case .badRequest(let answer): throw try answer.body.json.remoteFailure
        case .unauthorized(let answer): throw try answer.body.json.remoteFailure
        case .forbidden(let answer): throw try answer.body.json.remoteFailure
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Loading offers")
        }
    }

    private func present(_ page: OfferPage, fetchedAt: Int64, from position: GeoPosition, radius: Int, limit: Int, offline: Bool) throws -> OffersResult {
        let full = DateText.format(fetchedAt, calendar: configuration.calendar)
        // NB: "from 14:02" alone would pass a list of last week for today's.
        let sameDay = full.prefix(10) == DateText.format(configuration.clock(), calendar: configuration.calendar).prefix(10)
        let time = sameDay ? String(full.suffix(5)) : full
        // NB: a saved list of another place has nothing near here: "no offers within 1000 m"
        // would say there are none, where the device only cannot know.
        let away = position.distance(to: GeoPosition(latitude: page.latitude, longitude: page.longitude))
        let elsewhere = away > Double(page.radius)
        let distance = away < 1000 ? "\(Int(away.rounded())) m" : "\(Int((away / 1000).rounded())) km"
        let note = !offline ? nil : elsewhere
            ? "Offline: the saved offers, from \(time), are for a place \(distance) from here: connect to load offers near you"
            : "Offline: offers from \(time) cannot be updated"
        let spent = try spentPerCategory()
        let views = page.offers.compactMap { offer -> OfferView? in
            let distance = position.distance(to: GeoPosition(latitude: offer.latitude, longitude: offer.longitude))
            guard distance <= Double(radius) else { return nil }
            return OfferView(id: offer.id, name: offer.shopName, title: offer.title, shopType: offer.shopType, category: offer.category,
                             discountPercent: offer.discountPercent, distanceMeters: Int(distance.rounded()), featured: offer.featured,
                             demo: offer.demo, latitude: offer.latitude, longitude: offer.longitude,
                             recommendationReason: Self.reason(offer, distance: Int(distance.rounded()), spent: spent[offer.category.lowercased()]))
        }.sorted { ($0.featured ? 0 : 1, $0.distanceMeters, $0.id) < ($1.featured ? 0 : 1, $1.distanceMeters, $1.id) }
        // NB: what the server left out of its page counts too (a wider page is reused only whole).
        let unsent = max(0, (page.total ?? page.offers.count) - page.offers.count)
        return OffersResult(offers: Array(views.prefix(limit)), stale: offline, fetchedAt: fetchedAt, note: note, total: views.count + unsent)
    }

    /// "You spent EUR 84.00 on food in 30 days; 10% off at Marché U".
    static func reason(_ offer: Components.Schemas.Offer, distance: Int, spent: Money?) -> String {
        if let spent, spent.minorUnits > 0 {
            return "You spent \(spent) on \(offer.category.lowercased()) in 30 days; \(offer.title)"
        }
        return "\(offer.title), \(distance) m from you"
    }

    /// The person's largest spending per category in the last 30 days (in its main currency).
    private func spentPerCategory() throws -> [String: Money] {
        let since = ledger.now - 30 * 86_400_000
        return try ledger.store.reader.read { db in
            var spent: [String: Money] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT COALESCE(category, 'other') AS category, currency, SUM(amountMinor) AS total FROM spending_transactions
                WHERE kind = 'expense' AND occurredAt > ? GROUP BY 1, currency ORDER BY total
                """, arguments: [since]) {
                spent[row["category"]] = Money(minorUnits: row["total"], currency: row["currency"])
            }
            return spent
        }
    }
}
