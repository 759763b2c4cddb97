import EventualAPI
import Foundation
import Testing
@testable import Recycling

@Suite("The recycling model: nearest points, trash types, bins, packaging, reminders")
struct RecyclingModelTests {
    @Test func nearestSearchAgreesWithBruteForceOnTheRealSalzburgPoints() throws {
        // Given the 360 real points of Salzburg and origins across the city and beyond it
        let points = try SharedData.positions(SharedData.salzburg)
        let search = NearestSearch(points) { $0.position }
        let origins = [SharedData.salzburgCentre, GeoPosition(latitude: 47.75, longitude: 13.00),
                       GeoPosition(latitude: 47.83, longitude: 13.09), GeoPosition(latitude: 48.21, longitude: 16.37)]
        for origin in origins {
            // When the search and a brute-force haversine ranking answer the 10 nearest
            let found = search.nearest(to: origin, limit: 10)
            let expected = points.map { ($0.id, origin.distance(to: $0.position)) }.sorted { $0.1 < $1.1 }.prefix(10)
            // Then they name the same points at the same distances
            #expect(found.map(\.place.id) == expected.map(\.0), "from \(origin)")
            for (answer, truth) in zip(found, expected) { #expect(abs(answer.meters - truth.1) < 0.01) }
        }
    }

    @Test func nearestSearchFiltersAndStopsAtItsLimit() {
        let places = (0..<50).map { GeoPosition(latitude: 47 + Double($0) * 0.001, longitude: 13) }
        let search = NearestSearch(places) { $0 }
        let odd = search.nearest(to: GeoPosition(latitude: 47, longitude: 13), limit: 3) { Int(($0.latitude - 47) * 1000 + 0.5) % 2 == 1 }
        #expect(odd.map { Int(($0.place.latitude - 47) * 1000 + 0.5) } == [1, 3, 5])
        #expect(search.nearest(to: GeoPosition(latitude: 0, longitude: 0), limit: 0).isEmpty)
        #expect(NearestSearch([GeoPosition]()) { $0 }.nearest(to: GeoPosition(latitude: 0, longitude: 0), limit: 5).isEmpty)
    }

    @Test func haversineDistanceMatchesAKnownOne() {
        // Salzburg Hauptbahnhof to the cathedral: about 1.65 km as the crow flies.
        let station = GeoPosition(latitude: 47.8128, longitude: 13.0456)
        let cathedral = GeoPosition(latitude: 47.7980, longitude: 13.0469)
        #expect(abs(station.distance(to: cathedral) - 1649) < 20)
        #expect(station.distance(to: station) == 0)
    }

    @Test func positionsParseOnlyWhenOnEarth() {
        #expect(GeoPosition(parsing: "47.7981, 13.0465") == GeoPosition(latitude: 47.7981, longitude: 13.0465))
        for bad in ["", "47.7", "91,0", "0,181", "nan,0", "a,b", "1,2,3", "1e400,0"] { #expect(GeoPosition(parsing: bad) == nil, "\(bad)") }
    }

    @Test func aModelsAnswerNamesATrashTypeOnlyWhenItNamesExactlyOne() {
        #expect(TrashType(answer: "Plastic Bottle") == .plasticBottle)
        #expect(TrashType(answer: "  glass bottles.\n") == .glassBottle)
        #expect(TrashType(answer: "The item is an Aluminum Can") == .aluminumCan)
        #expect(TrashType(answer: "PAINT CAN") == .paintCan)
        #expect(TrashType(answer: "no item detected") == nil)
        #expect(TrashType(answer: "a banana") == nil)
        #expect(TrashType(answer: "Battery or Electronic Waste") == nil)
        #expect(TrashType(answer: "") == nil)
    }

    @Test func everyTrashTypeHasTheCampusBin() {
        #expect(TrashType.paperWaste.bin == .grey && TrashType.cardboardBox.bin == .grey)
        #expect([TrashType.plasticBottle, .aluminumCan, .glassBottle].allSatisfy { $0.bin == .blue })
        #expect(TrashType.foodScrap.bin == .green && TrashType.yardWaste.bin == .green)
        #expect(TrashType.styrofoam.bin == .yellow)
        #expect(TrashType.battery.bin == .special(.batteries))
        #expect(TrashType.electronicWaste.bin == .special(.electronics))
        #expect(TrashType.oilContainer.bin == .special(.oil))
        #expect(TrashType.allCases.count == 15)
    }

    @Test func packagingMaterialsOfTheRealRetailerFileAreAllRead() throws {
        // Given every material the retailer declared in its packaging file (the 8th column)
        let text = try String(contentsOf: SharedData.packaging, encoding: .utf8)
        let materials = text.split(separator: "\n").dropFirst().map { line in csvFields(String(line))[7] }
        #expect(materials.count == 50)
        // Then every one of them is read as a material that picks a bin
        for material in materials { #expect(PackagingMaterial(describing: material) != nil, "\(material)") }
        // Then each known spelling maps onto a material that picks a bin
        #expect(PackagingMaterial(describing: "Cellulosique / Carton plat") == .cardboard)
        #expect(PackagingMaterial(describing: "Cellulosique / Papier / Vélin") == .paper)
        #expect(PackagingMaterial(describing: "Cellulosique / Autre papier") == .paper)
        #expect(PackagingMaterial(describing: "Plastiques / PP - Polypropylène") == .plastic)
        #expect(PackagingMaterial(describing: "Plastiques / PET - Polytéréphtalate d'éthylène") == .plastic)
        #expect(PackagingMaterial(describing: "Plastiques / PS - Polystyrène") == .polystyrene)
        #expect(PackagingMaterial(describing: "Métaux / Aluminium") == .metal)
        #expect(PackagingMaterial(describing: "en:glass") == .glass)
        #expect(PackagingMaterial(describing: "wood") == nil)
    }

    @Test func aProductIsTheTrashTypeOfItsHeaviestPart() {
        let pastry = [PackagingPart(material: .paper, shape: "film", grams: 6.05),
                      PackagingPart(material: .cardboard, shape: "sleeve", grams: 11.6),
                      PackagingPart(material: .plastic, shape: "film", grams: 3.36)]
        #expect(TrashType(packaging: pastry) == .cardboardBox)
        #expect(TrashType(packaging: [PackagingPart(material: .glass, shape: nil, grams: nil)]) == .glassBottle)
        #expect(TrashType(packaging: []) == nil)
    }

    @Test func remindersComeAtTenAndAtEightOnlyForAStreakAtRisk() throws {
        let bogota = try #require(TimeZone(identifier: "America/Bogota"))
        func at(_ hour: Int, _ minute: Int, in zone: TimeZone) throws -> Date {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            return try #require(calendar.date(from: DateComponents(year: 2026, month: 11, day: 23, hour: hour, minute: minute)))
        }
        #expect(Reminder.due(at: try at(10, 0, in: bogota), timeZone: bogota, streak: 0, pointsToday: 0)?.title == "Time to recycle!")
        #expect(Reminder.due(at: try at(10, 59, in: bogota), timeZone: bogota, streak: 3, pointsToday: 50)?.kind == .daily)
        #expect(Reminder.due(at: try at(20, 15, in: bogota), timeZone: bogota, streak: 4, pointsToday: 0)?.title == "Don't lose your 4-day streak")
        #expect(Reminder.due(at: try at(20, 15, in: bogota), timeZone: bogota, streak: 4, pointsToday: 50) == nil)
        #expect(Reminder.due(at: try at(20, 15, in: bogota), timeZone: bogota, streak: 0, pointsToday: 0) == nil)
        #expect(Reminder.due(at: try at(11, 0, in: bogota), timeZone: bogota, streak: 4, pointsToday: 0) == nil)
        // 10:00 in Bogotá is 15:00 UTC: no reminder for someone in UTC at that instant
        let utc = try #require(TimeZone(identifier: "UTC"))
        #expect(Reminder.due(at: try at(10, 0, in: bogota), timeZone: utc, streak: 0, pointsToday: 0) == nil)
    }
}

/// The fields of one CSV line, quotes handled (enough for the retailer's file).
func csvFields(_ line: String) -> [String] {
    var fields: [String] = [], field = "", quoted = false
    var characters = line.makeIterator()
    while let character = characters.next() {
        switch character {
        case "\"": quoted.toggle()
        case "," where !quoted:
            fields.append(field)
            field = ""
        default: field.append(character)
        }
    }
    fields.append(field)
    return fields
}
