import Foundation
import Testing
import EventualAPI

@Suite("GeoPosition: one position, one distance, one validation")
struct GeoPositionTests {
    static let paris = GeoPosition(latitude: 48.8566, longitude: 2.3522)
    static let london = GeoPosition(latitude: 51.5074, longitude: -0.1278)

    @Test(arguments: [
        (paris, london, 343_556.5),
        (GeoPosition(latitude: 0, longitude: 0), GeoPosition(latitude: 1, longitude: 0), 111_195.1),     // a degree of a meridian
        (GeoPosition(latitude: 0, longitude: 0), GeoPosition(latitude: 0, longitude: 180), 20_015_114.4), // half the equator
        (GeoPosition(latitude: 0, longitude: 179.5), GeoPosition(latitude: 0, longitude: -179.5), 111_195.1), // across the antimeridian
        (GeoPosition(latitude: -33.8688, longitude: 151.2093), GeoPosition(latitude: 40.7128, longitude: -74.006), 15_988_777.6),
    ])
    func haversineGivesKnownDistances(_ from: GeoPosition, _ to: GeoPosition, _ metres: Double) {
        #expect(abs(from.distance(to: to) - metres) < 0.5)
        #expect(abs(to.distance(to: from) - metres) < 0.5, "the same both ways")
    }

    @Test func aPlaceIsNoDistanceFromItself() {
        #expect(Self.paris.distance(to: Self.paris) == 0)
    }

    @Test(arguments: [(90.0, 180.0), (-90, -180), (0, 0), (-33.9, 151.2), (47.8095, 13.055)])
    func positionsOnEarthAreValid(_ latitude: Double, _ longitude: Double) {
        #expect(GeoPosition(latitude: latitude, longitude: longitude).isValid)
    }

    @Test(arguments: [(90.0001, 0.0), (-91, 0), (0, 180.0001), (0, -540), (.nan, 0), (0, .nan), (.infinity, 0), (0, -.infinity),
                      (1e308, 1e308)])
    func absurdPositionsAreNot(_ latitude: Double, _ longitude: Double) {
        #expect(!GeoPosition(latitude: latitude, longitude: longitude).isValid)
    }

    @Test func typedPositionsParse() {
        #expect(GeoPosition(parsing: "44.4949,11.3426") == GeoPosition(latitude: 44.4949, longitude: 11.3426))
        #expect(GeoPosition(parsing: " -33.9 , 151.2 ") == GeoPosition(latitude: -33.9, longitude: 151.2))
    }

    @Test(arguments: ["", ",", "44.4949", "44.4949,", ",11.3", "1,,2", "1,2,3", "44.4949;11.3426", "91,0", "0,181", "nan,0",
                      "inf,0", "1e308,0", "north,east", "44,4949 11,3426"])
    func textThatIsNoPositionIsRefused(_ text: String) {
        #expect(GeoPosition(parsing: text) == nil)
    }

    @Test func aRefusedTextThrowsTheCallersErrorWithWhatWasTyped() {
        struct NotAPosition: Error, Equatable { let text: String }
        #expect(throws: NotAPosition(text: "91,0")) { try GeoPosition(parsing: " 91,0 ", orThrow: NotAPosition.init) }
        #expect(throws: Never.self) { try GeoPosition(parsing: " -33.9,151.2", orThrow: NotAPosition.init) }
    }

    @Test func jsonKeepsTheFieldNames() throws {
        let json = try JSONEncoder().encode(GeoPosition(latitude: 43.7384, longitude: 7.4246))
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Double])
        #expect(object == ["latitude": 43.7384, "longitude": 7.4246])
        #expect(try JSONDecoder().decode(GeoPosition.self, from: json) == GeoPosition(latitude: 43.7384, longitude: 7.4246))
    }

    @Test func roundingKeepsAbout100Metres() {
        let rounded = GeoPosition(latitude: 47.80951, longitude: -13.05549).roundedTo100Metres
        #expect(rounded == GeoPosition(latitude: 47.81, longitude: -13.055))
        #expect(rounded.distance(to: GeoPosition(latitude: 47.80951, longitude: -13.05549)) < 100)
    }
}
