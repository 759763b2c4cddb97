import Foundation
import EventualAPI
import Testing
@testable import Pantry

@Suite("Expiries, windows, barcodes and relative days")
struct ParsingTests {
    let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
    let now = Date(timeIntervalSince1970: 1_790_000_000) // 2026-09-21 UTC

    @Test func expiryAcceptsDatesAndOffsets() throws {
        let parser = ExpiryParser(calendar: calendar)
        #expect(try parser.expiry("2026-12-24", now: now).description == "2026-12-24")
        #expect(try parser.expiry("+5d", now: now).description == "2026-09-26")
        #expect(try parser.expiry("+2w", now: now).description == "2026-10-05")
        #expect(try parser.expiry("+1m", now: now).description == "2026-10-21")
        // What `list` says of a day, typed back: "tomorrow" was refused before
        #expect(try parser.expiry("tomorrow", now: now).description == "2026-09-22")
        #expect(try parser.expiry(" Today ", now: now).description == "2026-09-21")
        // Past midnight in the person's zone, tomorrow is the day after that zone's today
        var tokyo = calendar
        tokyo.timeZone = TimeZone(identifier: "Asia/Tokyo")!
        #expect(try ExpiryParser(calendar: tokyo).expiry("tomorrow", now: now.addingTimeInterval(12 * 3600)).description == "2026-09-23")
        #expect(throws: PantryError.invalidExpiry("yesterday")) { try parser.expiry("yesterday", now: now) }
        #expect(throws: PantryError.invalidExpiry("2026-02-30")) { try parser.expiry("2026-02-30", now: now) }
        #expect(throws: PantryError.invalidExpiry("soon")) { try parser.expiry("soon", now: now) }
    }

    @Test func windowAcceptsDaysAndWeeks() throws {
        let parser = ExpiryParser(calendar: calendar)
        #expect(try parser.days("3d") == 3)
        #expect(try parser.days("2w") == 14)
        #expect(try parser.days("5") == 5)
        #expect(throws: PantryError.invalidWindow("x")) { try parser.days("x") }
    }

    @Test func relativeDaysReadLikeSpeech() throws {
        let today = try #require(Day(iso: "2026-09-21"))
        #expect(RelativeDay.describe(today, today: today, calendar: calendar) == "today")
        #expect(RelativeDay.describe(today.adding(days: 1, calendar: calendar), today: today, calendar: calendar) == "tomorrow")
        #expect(RelativeDay.describe(today.adding(days: 3, calendar: calendar), today: today, calendar: calendar) == "in 3 days")
        #expect(RelativeDay.describe(today.adding(days: -2, calendar: calendar), today: today, calendar: calendar) == "2 days ago")
    }

    @Test func barcodesAreCheckedAndPaddedToFourteenDigits() throws {
        #expect(try GTIN(scanned: "049000028911").normalized == "00049000028911")
        #expect(try GTIN(scanned: "0049000028911") == GTIN(scanned: "049 000-028911"))
        #expect(try GTIN(scanned: "4006381333931").shortForm == "4006381333931")
        #expect(throws: PantryError.invalidBarcode("4006381333932")) { try GTIN(scanned: "4006381333932") }
        #expect(throws: PantryError.invalidBarcode("abc")) { try GTIN(scanned: "abc") }
    }
}
