import EventualAPI
import EventualKit
@testable import EventualServer
import Foundation
import Synchronization
import Testing
@testable import Spending

@Suite("Offers near the person: distances, order, staleness, offline", .timeLimit(.minutes(4)))
struct OffersTests {
    static let shops = SampleData.file("osm-shops-monaco.geojson")
    /// Place du Casino, Monte-Carlo.
    static let casino = GeoPosition(latitude: 43.7394, longitude: 7.4278)

    /// A live server with Monaco's shops and demo offers, and a verified person signed in on a device.
    static func withShops(clock: TestClock = TestClock(),
                          _ body: @Sendable (URL, ScratchFolder, SpendingUser, UserSpending) async throws -> Void) async throws {
        try await withLiveServer { server, scratch in
            let database = try await serverDatabase(scratch)
            _ = try await ShopImporter(database: database).importGeoJSON(at: shops, demoOffers: true)
            await database.close()
            let user = try await SpendingUser.verified(on: server, scratch: scratch)
            let spending = try await spendingDevice(scratch.folder("phone"), server: server, clock: clock)
                .login(email: user.email, password: user.password).spending
            try await body(server, scratch, user, spending)
        }
    }

    @Test func offersAreWithinTheRadiusFeaturedFirstThenNearestWithDistancesComputedOnTheDevice() async throws {
        try await Self.withShops { server, scratch, user, spending in
            // Given an admin's featured offer at Marché U, Boulevard Princesse Charlotte
            let database = try await serverDatabase(scratch)
            _ = try await RoleAdministration(database: database).set(.admin, email: user.email)
            await database.close()
            guard case .created(let created) = try await spending.app.link.client.postOffer(body: .json(.init(
                shopId: "osm-node-267885935", title: "2 for 1 on fruit", category: "food", discountPercent: 50, featured: true))) else {
                throw TestFailure("the admin could not post an offer")
            }
            let featured = try created.body.json
            // When the person asks for offers within 1 km of the casino
            let result = try await spending.offers.offers(near: Self.casino, radius: 1000)
            // Then the featured one comes first, the rest nearest first, all within 1 km
            #expect(result.offers.first?.id == featured.id)
            #expect(result.offers.first?.featured == true)
            let rest = result.offers.dropFirst().map(\.distanceMeters)
            #expect(rest == rest.sorted())
            #expect(result.offers.allSatisfy { $0.distanceMeters <= 1000 })
            #expect(result.offers.count > 20)
            // and each distance is the great-circle distance, worked out here on a local flat
            // approximation (good to a metre at this scale)
            for offer in result.offers {
                let dy = (offer.latitude - Self.casino.latitude) * .pi / 180 * 6_371_008.8
                let dx = (offer.longitude - Self.casino.longitude) * .pi / 180 * 6_371_008.8 * cos(Self.casino.latitude * .pi / 180)
                #expect(abs(Double(offer.distanceMeters) - (dx * dx + dy * dy).squareRoot()) <= 2)
            }
            // Marché U (43.7415271, 7.4257261): 236.5 m north and 166.6 m west of the casino, 289 m away
            #expect(result.offers.first.map { (287...291).contains($0.distanceMeters) } == true)
            #expect(!result.stale && result.note == nil)
        }
    }

    @Test func theReasonNamesThePersonsOwnSpending() async throws {
        try await Self.withShops { _, _, _, spending in
            _ = try await spending.ledger.addAccount(name: "Cash", currency: "EUR")
            _ = try await spending.ledger.record(.expense, TransactionDetails(amount: "84", account: "Cash", category: "food"))
            let result = try await spending.offers.offers(near: Self.casino, radius: 1000)
            let food = try #require(result.offers.first { $0.category == "food" })
            #expect(food.recommendationReason == "You spent EUR 84.00 on food in 30 days; \(food.title)")
            let other = try #require(result.offers.first { $0.category != "food" })
            #expect(other.recommendationReason == "\(other.title), \(other.distanceMeters) m from you")
        }
    }

    @Test func aSavedListIsUsedForTenMinutesThenMarkedStaleOfflineAndRefreshedOnline() async throws {
        let clock = TestClock(1_800_000_000_000 - 1_800_000_000_000 % 86_400_000 + 14 * 3_600_000 + 2 * 60_000)   // 14:02 UTC
        try await Self.withShops(clock: clock) { server, scratch, user, spending in
            let first = try await spending.offers.offers(near: Self.casino)
            #expect(first.fetchedAt == clock.now && !first.stale && first.note == nil)
            let folder = scratch.folder("phone")
            // Five minutes later, offline: the saved list, under the note, stale (offline is known
            // from the connection, not from the list's age)
            clock.advance(.seconds(5 * 60))
            let offline = try await spendingDevice(folder, server: unreachableServer, clock: clock).open()
            let early = try await offline.offers.offers(near: Self.casino)
            #expect(early.offers == first.offers && early.stale && early.note == "Offline: offers from 14:02 cannot be updated")
            // Five minutes later, online again: the young list needs no new request, and the note is gone
            let youngOnline = try await spendingDevice(folder, server: server, clock: clock).open()
            let shown = try await youngOnline.offers.offers(near: Self.casino)
            #expect(shown.fetchedAt == first.fetchedAt && !shown.stale && shown.note == nil)
            // Eleven minutes after loading, still offline: the saved list, stale, with the note
            clock.advance(.seconds(6 * 60))
            let late = try await offline.offers.offers(near: Self.casino)
            #expect(late.offers == first.offers)
            #expect(late.stale)
            #expect(late.note == "Offline: offers from 14:02 cannot be updated")
            // Back online: refreshed
            let online = try await spendingDevice(folder, server: server, clock: clock).open()
            let fresh = try await online.offers.offers(near: Self.casino)
            #expect(fresh.fetchedAt == clock.now && !fresh.stale && fresh.note == nil)
            // A list from another day says its day
            clock.advance(.seconds(86_400))
            let tomorrow = try await spendingDevice(folder, server: unreachableServer, clock: clock).open().offers.offers(near: Self.casino)
            #expect(tomorrow.note == "Offline: offers from \(DateText.format(fresh.fetchedAt, calendar: online.ledger.calendar)) cannot be updated")
            // And a saved list of another place says so, not that there is no offer here (the week of use)
            let salzburg = GeoPosition(latitude: 47.8, longitude: 13.04)
            let elsewhere = try await spendingDevice(folder, server: unreachableServer, clock: clock).open().offers.offers(near: salzburg)
            #expect(elsewhere.offers.isEmpty && elsewhere.stale)
            #expect(elsewhere.note?.hasPrefix("Offline: the saved offers, from ") == true && elsewhere.note?.contains("km from here") == true,
                    "\(String(describing: elsewhere.note))")
        }
    }

    @Test func whileOffersAreShownTheListIsRefreshedEveryIntervalOnline() async throws {
        try await withLiveServer { server, scratch in
            let user = try await SpendingUser.verified(on: server, scratch: scratch)
            let device = spendingDevice(scratch.folder("phone"), server: server) { $0.offersMaxAge = .milliseconds(300) }
            let spending = try await device.login(email: user.email, password: user.password).spending
            let results = ResultLog()
            let task = Task { await spending.offers.keepFresh(position: { Self.casino }, shown: { results.add($0) }) }
            // NB: the rounds are counted, not the wall time: a machine busy with the whole suite took
            // two seconds for one. A minute is 200 intervals; the default interval (10 min) would show one.
            let deadline = ContinuousClock.now + .seconds(60)
            while results.all.count < 3 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            task.cancel()
            await task.value
            // Several rounds, each a fresh list from the server (no note)
            let seen = results.all
            #expect(seen.count >= 3)
            #expect(Set(seen.map(\.fetchedAt)).count >= 3 && seen.allSatisfy { !$0.stale && $0.note == nil })
        }
    }

    @Test func aListCutAtTheLimitSaysHowManyItLeftOutAndMoreCanBeAsked() async throws {
        try await Self.withShops { _, _, _, spending in
            // Worked out here from the file: shops (and places to spend at) within 1 km of the casino
            let data = try Data(contentsOf: Self.shops)
            let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let features = try #require(root["features"] as? [[String: Any]])
            // (three shops appear twice in the file: one shop each)
            let within = Set(features.filter { feature in
                let properties = feature["properties"] as? [String: Any] ?? [:]
                guard properties["shop"] as? String != "vacant", let point = (feature["geometry"] as? [String: Any])?["coordinates"] as? [Double] else { return false }
                return Self.casino.distance(to: GeoPosition(latitude: point[1], longitude: point[0])) <= 1000
            }.compactMap { $0["id"] as? String }).count
            #expect(within > 200)
            let cut = try await spending.offers.offers(near: Self.casino, radius: 1000)
            #expect(cut.offers.count == 200 && cut.total == within, "\(cut.total) \(within)")
            let all = try await spending.offers.offers(near: Self.casino, radius: 1000, limit: 1000)
            #expect(all.offers.count == within && all.total == within, "\(all.offers.count) \(all.total)")
            #expect(Array(all.offers.prefix(200)).map(\.id) == cut.offers.map(\.id))
            // A saved whole list answers a smaller limit without losing the count
            let few = try await spending.offers.offers(near: Self.casino, radius: 1000, limit: 5)
            #expect(few.offers.count == 5 && few.total == within && few.fetchedAt == all.fetchedAt)
            // The server refuses a limit out of its range with a 400
            for limit in [0, 1001] {
                guard case .badRequest = try await spending.app.link.client.getOffers(query: .init(near: "43.7394,7.4278", limit: limit)) else {
                    throw TestFailure("limit \(limit) should be a 400")
                }
            }
        }
    }

    @Test func withNoSavedListAndNoNetworkThePersonIsAskedToConnect() async throws {
        try await Self.withShops { _, scratch, _, _ in
            let offline = try await spendingDevice(scratch.folder("phone"), server: unreachableServer).open()
            await #expect(throws: SpendingError.offersNeedConnection) { try await offline.offers.offers(near: Self.casino) }
        }
    }

    @Test func onlyAdminsPostOffersAndViewsQueuedOfflineCountOnce() async throws {
        try await Self.withShops { server, scratch, _, spending in
            // A person who is not an admin is refused
            guard case .forbidden = try await spending.app.link.client.postOffer(body: .json(.init(
                shopId: "osm-node-267885935", title: "free", category: "food"))) else { throw TestFailure("expected 403") }
            // A view queued offline reaches the server once
            let offline = try await spendingDevice(scratch.folder("phone"), server: unreachableServer).open()
            try await offline.viewOffer("demo-osm-node-267885935", shop: "Carrefour")
            let online = try await spendingDevice(scratch.folder("phone"), server: server).open()
            #expect(await online.device.sync().failure == nil)
            #expect(await online.device.sync().failure == nil)
            let database = try await serverDatabase(scratch)
            let views = try await SpendingStore(database: database).views(offerID: "demo-osm-node-267885935")
            await database.close()
            #expect(views == 1)
        }
    }

    @Test(arguments: Backend.available)
    func importingShopsTwiceChangesNothing(_ backend: Backend) async throws {
        let scratch = try await ScratchDatabase.make(backend)
        let database = try await Database.open(scratch.location, logger: .init(label: "test"))
        do {
            let first = try await ShopImporter(database: database).importGeoJSON(at: Self.shops, demoOffers: true)
            let second = try await ShopImporter(database: database).importGeoJSON(at: Self.shops, demoOffers: true)
            // 435 features, one of them a vacant shop (no place to spend money at)
            #expect(first.imported + first.unchanged == 434 && first.skipped == 1 && first.demoOffers == first.imported)
            #expect(second.imported == 0 && second.updated == 0 && second.demoOffers == 0 && second.unchanged == 434)
            // Recycling containers are no shops: every one skipped, none given an offer
            let recycling = try await ShopImporter(database: database)
                .importGeoJSON(at: SampleData.file("osm-recycling-malaga-centre.geojson"), demoOffers: true)
            #expect(recycling.imported == 0 && recycling.skipped == 830 && recycling.demoOffers == 0)
        } catch {
            await database.close()
            await scratch.remove()
            throw error
        }
        await database.close()
        await scratch.remove()
    }
}

/// What a background task showed, for a test to read.
final class ResultLog: Sendable {
    private let results = Mutex<[OffersResult]>([])
    func add(_ result: OffersResult) { results.withLock { $0.append(result) } }
    var all: [OffersResult] { results.withLock { $0 } }
}
