import EventualAPI
import Foundation
import Testing
@testable import Pantry

@Suite("Reminders and places")
struct InsightTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let day: Int64 = 86_400_000

    func item(_ name: String, expires: Int? = nil, boughtDaysAgo: Int64 = 1, status: PantryItem.Status = .inPantry,
              finishedDaysAgo: Int64? = nil, barcode: String? = nil, place: String? = nil, at: GeoPosition? = nil) -> PantryItem {
        let today = Day(date: now)
        var item = PantryItem(id: UUID().uuidString, details: ItemDetails(name: name, expiresOn: expires.map { today.adding(days: $0) },
                                                                          place: place, position: at),
                              barcode: barcode, productId: nil, boughtAt: UnixMillis.milliseconds(now) - boughtDaysAgo * day)
        item.status = status
        item.finishedAt = finishedDaysAgo.map { UnixMillis.milliseconds(now) - $0 * day }
        return item
    }

    @Test func remindersSortExpiredSoonRanOutAndForgotten() {
        // Given a pantry with one of each case
        let items = [
            item("Old yogurt", expires: -2),
            item("Milk", expires: 1),
            item("Cheese", expires: 10),
            item("Coffee", boughtDaysAgo: 40, status: .consumed, finishedDaysAgo: 20, barcode: "05000112548167"),
            item("Coffee", boughtDaysAgo: 15, status: .consumed, finishedDaysAgo: 3, barcode: "05000112548167"),
            item("Tea", boughtDaysAgo: 15, status: .consumed, finishedDaysAgo: 4),  // bought once, ran out all the same
            item("Saffron", boughtDaysAgo: 90),
        ]
        // When the reminders for a 3-day window are worked out
        let reminders = Reminders.compute(items: items, windowDays: 3, now: now)
        // Then each item lands where a person expects
        #expect(reminders.expired.map(\.name) == ["Old yogurt"])
        #expect(reminders.expiringSoon.map(\.name) == ["Milk"])
        #expect(reminders.shoppingList.map(\.name) == ["Coffee", "Tea"])
        #expect(reminders.shoppingList.first?.timesBought == 2)
        #expect(reminders.forgotten.map(\.name) == ["Saffron"])
    }

    @Test func productStillInThePantryIsNotOnTheShoppingList() {
        let items = [
            item("Rice", status: .consumed, finishedDaysAgo: 2, barcode: "04006381333931"),
            item("Rice", barcode: "04006381333931"),
        ]
        #expect(Reminders.compute(items: items, windowDays: 3, now: now).shoppingList.isEmpty)
    }

    @Test func placesCountPurchasesAndGeoJSONHasLongitudeFirst() throws {
        let coop = GeoPosition(latitude: 44.4949, longitude: 11.3426)
        let items = [
            item("A", place: "Coop", at: coop), item("B", place: "Coop"), item("C", place: "Market"), item("D"),
        ]
        let places = Place.summarize(items)
        #expect(places.map(\.name) == ["Coop", "Market"])
        #expect(places.map(\.count) == [2, 1])
        let json = try JSONSerialization.jsonObject(with: Place.geoJSON(places)) as? [String: Any]
        #expect(json?["type"] as? String == "FeatureCollection")
        let features = try #require(json?["features"] as? [[String: Any]])
        #expect(features.count == 1)
        let geometry = features.first?["geometry"] as? [String: Any]
        #expect(geometry?["coordinates"] as? [Double] == [11.3426, 44.4949])
    }

    @Test func wildTimesFromAnotherDeviceDoNotTrap() {
        // Given items whose times, synced from elsewhere, are far out of range
        var ancient = item("Ancient")
        ancient.boughtAt = .min
        var ranOut = item("Salt", status: .consumed, barcode: "05000112548167")
        ranOut.finishedAt = .min
        var again = item("Salt", status: .consumed, barcode: "05000112548167")
        again.finishedAt = .max
        // When the reminders are worked out and the times said
        let reminders = Reminders.compute(items: [ancient, ranOut, again], windowDays: 3, now: now)
        // Then nothing traps: the ancient item is forgotten, and the ages read as words
        #expect(reminders.forgotten.map(\.name) == ["Ancient"])
        #expect(RelativeDay.ago(.min, now: UnixMillis.milliseconds(now)).hasSuffix("days ago"))
        #expect(RelativeDay.ago(.max, now: UnixMillis.milliseconds(now)) == "just now")
    }
}
