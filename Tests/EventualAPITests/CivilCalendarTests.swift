import Testing
import EventualAPI

@Suite("CivilCalendar: day numbers without a calendar object")
struct CivilCalendarTests {
    @Test(arguments: [
        (1970, 1, 1, 0), (1969, 12, 31, -1), (2000, 2, 29, 11_016), (2024, 10, 4, 20_000),
        (1, 1, 1, -719_162), (9999, 12, 31, 2_932_896),
    ] as [(Int64, Int64, Int64, Int64)])
    func knownDatesHaveTheirDayNumbers(_ year: Int64, _ month: Int64, _ day: Int64, _ number: Int64) {
        #expect(CivilCalendar.dayNumber(year: year, month: month, day: day) == number)
        #expect(CivilCalendar.date(ofDay: number) == (year, month, day))
    }

    @Test func everyDayFromYearOneToYear9999RoundTrips() {
        for number in stride(from: Int64(-719_162), through: 2_932_896, by: 97) {
            let (year, month, day) = CivilCalendar.date(ofDay: number)
            #expect(CivilCalendar.dayNumber(year: year, month: month, day: day) == number)
        }
    }

    @Test func leapYearsFollowTheGregorianRule() {
        func daysInFebruary(_ year: Int64) -> Int64 {
            CivilCalendar.dayNumber(year: year, month: 3, day: 1) - CivilCalendar.dayNumber(year: year, month: 2, day: 1)
        }
        #expect(daysInFebruary(2024) == 29)
        #expect(daysInFebruary(2023) == 28)
        #expect(daysInFebruary(1900) == 28, "a century is not a leap year")
        #expect(daysInFebruary(2000) == 29, "unless it divides by 400")
    }

    @Test func textIsZeroPaddedISO() {
        #expect(CivilCalendar.text(ofDay: 0) == "1970-01-01")
        #expect(CivilCalendar.text(ofDay: 11_016) == "2000-02-29")
        #expect(CivilCalendar.text(ofDay: -719_162) == "0001-01-01")
        #expect(CivilCalendar.text(ofDay: 2_932_896) == "9999-12-31")
    }
}
