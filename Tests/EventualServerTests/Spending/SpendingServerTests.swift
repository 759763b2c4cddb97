import EventualAPI
import EventualKit
import Foundation
import Testing
@testable import EventualServer
@testable import Spending

@Suite("The /v1/spending endpoints on SQLite and PostgreSQL", .timeLimit(.minutes(4)))
struct SpendingServerTests {
    /// A live server on a scratch database of `backend`, its mail in a scratch folder, with Monaco's shops.
    static func withServer(_ backend: Backend, _ body: @Sendable (URL, ScratchFolder, Database) async throws -> Void) async throws {
        let database = try await ScratchDatabase.make(backend)
        let mail = try ScratchFolder("spendiq-mail")
        do {
            try await withLiveServer(configure: {
                $0.database = database.location
                $0.mail = .directory(mail.url.appendingPathComponent("mail").path)
            }) { server, _ in
                let handle = try await Database.open(database.location, logger: .init(label: "test"))
                do {
                    _ = try await ShopImporter(database: handle).importGeoJSON(at: SampleData.file("osm-shops-monaco.geojson"), demoOffers: true)
                    try await body(server, mail, handle)
                } catch {
                    await handle.close()
                    throw error
                }
                await handle.close()
            }
        } catch {
            mail.remove()
            await database.remove()
            throw error
        }
        mail.remove()
        await database.remove()
    }

    @Test(arguments: Backend.available)
    func insightsComeFromThePersonsSyncedTransactions(_ backend: Backend) async throws {
        try await Self.withServer(backend) { server, mail, _ in
            let user = try await SpendingUser.verified(on: server, scratch: mail)
            let spending = try await spendingDevice(mail.folder("phone"), server: server).login(email: user.email, password: user.password).spending
            _ = try await spending.ledger.addAccount(name: "Card", kind: .card, currency: "EUR")
            // Five coffees in Monaco, then one in Paris two hours later at four times the price
            let now = UnixMillis.now()
            for (index, amount) in ["3.00", "3.20", "2.80", "3.10", "2.90"].enumerated() {
                let when = DateText.format(now - Int64(6 - index) * 3_600_000, calendar: spending.ledger.calendar).replacingOccurrences(of: " ", with: "T")
                _ = try await spending.ledger.record(.expense, TransactionDetails(amount: amount, account: "Card", category: "cafe", date: when,
                                                                                 position: GeoPosition(latitude: 43.7394, longitude: 7.4278)))
            }
            let paris = try await spending.ledger.record(.expense, TransactionDetails(
                amount: "12.00", account: "Card", category: "cafe", position: GeoPosition(latitude: 48.8566, longitude: 2.3522))).transaction
            #expect(await spending.device.sync().failure == nil)
            let result = try await spending.insights.insights()
            #expect(result.fresh)
            #expect(Set(result.insights.filter { $0.transactionId == paris.id }.map(\.kind)) == ["location", "amount"])
            // Median 3.00, MAD 0.10: 12.00 is 90.0 MADs away
            #expect(result.insights.contains { $0.kind == "amount" && $0.message.contains("is 90.0 median absolute deviations") })
            // Offline, the saved findings are shown, said to be saved
            let offline = try await spendingDevice(mail.folder("phone"), server: unreachableServer).open()
            let saved = try await offline.insights.insights()
            #expect(!saved.fresh && saved.insights == result.insights)
        }
    }

    @Test(arguments: Backend.available)
    func insightsReadEverySpaceThePersonIsInAndNoneTheyLeft(_ backend: Backend) async throws {
        try await Self.withServer(backend) { server, mail, database in
            // Given Alice's own account and one she shares with Bob, a transaction in each
            let alice = try await SpendingUser.verified(on: server, scratch: mail, name: "alice")
            let bob = try await SpendingUser.verified(on: server, scratch: mail, name: "bob")
            let alices = try await spendingDevice(mail.folder("alice"), server: server).login(email: alice.email, password: alice.password).spending
            _ = try await alices.ledger.addAccount(name: "Home", currency: "EUR")
            _ = try await alices.ledger.addAccount(name: "Mine", currency: "EUR")
            let shared = try await alices.record(.expense, TransactionDetails(amount: "30", account: "Home")).transaction
            let own = try await alices.record(.expense, TransactionDetails(amount: "4", account: "Mine")).transaction
            _ = try await alices.sharing.share("Home", with: bob.username)
            #expect(await alices.device.sync().failure == nil)
            let bobs = try await spendingDevice(mail.folder("bob"), server: server).login(email: bob.email, password: bob.password).spending
            let store = SpendingStore(database: database)
            // Before Bob accepts, his insights read none of it; Alice's read both, once each
            #expect(try await store.transactions(userID: bob.userID(bobs)).isEmpty)
            #expect(try await store.transactions(userID: alices.session.userID).map(\.id).sorted() == [shared.id, own.id].sorted())
            // When he accepts, they read the shared one, not Alice's own
            try await bobs.spaces.accept(try #require(try await bobs.spaces.invitations().value.waiting.first).id)
            #expect(await bobs.device.sync().failure == nil)
            _ = try await bobs.record(.expense, TransactionDetails(amount: "6", account: "Home"))
            #expect(await bobs.device.sync().failure == nil)
            #expect(try await store.transactions(userID: bob.userID(bobs)).count == 2)
            #expect(try await store.transactions(userID: bob.userID(bobs)).contains { $0.id == shared.id })
            // And once he leaves, none again
            try await bobs.spaces.leave(try #require(try bobs.spaces.list().first { $0.kind == .shared }).id)
            #expect(await bobs.device.sync().failure == nil)
            #expect(try await store.transactions(userID: bob.userID(bobs)).isEmpty)
            #expect(try await store.transactions(userID: alices.session.userID).count == 3)
        }
    }

    @Test(arguments: Backend.available)
    func badQueriesAre400sAndPositionsAndVisitsAreKept(_ backend: Backend) async throws {
        try await Self.withServer(backend) { server, mail, database in
            let user = try await SpendingUser.verified(on: server, scratch: mail)
            let spending = try await spendingDevice(mail.folder("phone"), server: server).login(email: user.email, password: user.password).spending
            let client = spending.app.link.client
            for near in ["91,0", "0,181", "1,2,3", "abc"] {
                let answer = try await client.getOffers(query: .init(near: near))
                guard case .badRequest = answer else { throw TestFailure("near=\(near) answered \(answer)") }
            }
            guard case .badRequest = try await client.getOffers(query: .init(near: "43.7,7.4", radius: 20_001)) else { throw TestFailure("radius") }
            guard case .ok(let some) = try await client.getOffers(query: .init(near: "43.7394,7.4278", radius: 300)) else { throw TestFailure("offers") }
            #expect(try some.body.json.offers.allSatisfy { GeoPosition(latitude: 43.7394, longitude: 7.4278).distance(to: GeoPosition(latitude: $0.latitude, longitude: $0.longitude)) <= 300 })
            // A position and a later one sent first: the newer stays
            _ = try await client.postLocation(body: .json(.init(latitude: 43.74, longitude: 7.42, at: 2_000)))
            _ = try await client.postLocation(body: .json(.init(latitude: 10, longitude: 10, at: 1_000)))
            let kept = try await SpendingStore(database: database).location(userID: spending.session.userID)
            #expect(kept?.latitude == 43.74 && kept?.at == 2_000)
            // An admin's offer needs an existing shop
            _ = try await RoleAdministration(database: database).set(.admin, email: user.email)
            guard case .notFound = try await client.postOffer(body: .json(.init(shopId: "osm-node-0", title: "x", category: "food"))) else {
                throw TestFailure("expected 404")
            }
        }
    }
}

private extension SpendingUser {
    func userID(_ spending: UserSpending) -> String { spending.session.userID }
}
