import EventualAPI
import Testing
@testable import Pantry

@Suite("An item's position: a place on Earth or refused")
struct ItemPositionTests {
    @Test(arguments: [GeoPosition(latitude: 91, longitude: 0), GeoPosition(latitude: 0, longitude: -180.5),
                      GeoPosition(latitude: .nan, longitude: 11.3), GeoPosition(latitude: 44.5, longitude: .infinity)])
    func aPositionOffEarthIsRefusedBeforeTheItemIsWritten(_ position: GeoPosition) {
        #expect(throws: PantryError.invalidCoordinates(position.description)) {
            try ItemDetails(name: "Milk", position: position).validate()
        }
    }

    @Test func aPositionOnEarthIsTaken() throws {
        try ItemDetails(name: "Milk", position: GeoPosition(latitude: -33.9, longitude: 151.2)).validate()
    }

    @Test func aTypedPositionThatIsNoneIsThePantrysError() {
        #expect(throws: PantryError.invalidCoordinates("44.4949,,11.3426")) {
            try GeoPosition(parsing: " 44.4949,,11.3426 ", orThrow: PantryError.invalidCoordinates)
        }
    }
}
