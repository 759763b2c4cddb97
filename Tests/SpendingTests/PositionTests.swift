import EventualAPI
import EventualKit
import GRDB
import Testing
@testable import Spending

@Suite("A transaction's or the person's position: a place on Earth or refused")
struct PositionTests {
    @Test(arguments: [GeoPosition(latitude: -90.1, longitude: 0), GeoPosition(latitude: .nan, longitude: 7.42)])
    func aTransactionsPositionOffEarthIsRefused(_ position: GeoPosition) {
        #expect(throws: SpendingError.invalidCoordinates(position.description)) { try Ledger.position(position) }
    }

    @Test func aSensorReadingOffEarthIsNeitherKeptNorSent() async throws {
        let store = try LocalStore(writer: DatabaseQueue(), migrations: SpendingSchema.migrations)
        let tracker = LocationTracker(store: store, clock: { 1_764_000_000_000 })
        await #expect(throws: SpendingError.invalidCoordinates("nan,7.42")) {
            try await tracker.observe(GeoPosition(latitude: .nan, longitude: 7.42), force: true)
        }
        #expect(try tracker.last() == nil)
        #expect(try Outbox(store: store).entries().isEmpty)
        // While one on Earth is kept and queued
        #expect(try await tracker.observe(GeoPosition(latitude: 43.7384, longitude: 7.4246)).queued)
        #expect(try tracker.last()?.position == GeoPosition(latitude: 43.7384, longitude: 7.4246))
    }
}
