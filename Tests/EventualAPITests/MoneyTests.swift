import Foundation
import Testing
import EventualAPI

@Suite("Money and Currency: exact amounts with each currency's digits")
struct MoneyTests {
    @Test(arguments: [
        (1250, "EUR", "EUR 12.50"), (-5, "EUR", "EUR -0.05"), (0, "EUR", "EUR 0.00"), (7, "USD", "USD 0.07"),
        (1200, "JPY", "JPY 1200"), (-1200, "JPY", "JPY -1200"), (1250, "BHD", "BHD 1.250"), (1, "KWD", "KWD 0.001"),
        (123, "XYZ", "XYZ 1.23"),
    ] as [(Int64, String, String)])
    func anAmountShowsWithItsCurrencysDigits(_ minor: Int64, _ currency: String, _ text: String) {
        #expect(Money(minorUnits: minor, currency: currency).description == text)
    }

    @Test func theExtremesOfInt64Show() {
        #expect(Money(minorUnits: .max, currency: "EUR").amountText == "92233720368547758.07")
        #expect(Money(minorUnits: .min, currency: "EUR").amountText == "-92233720368547758.08")
        #expect(Money(minorUnits: .min, currency: "JPY").amountText == "-9223372036854775808")
    }

    @Test func moneyRoundTripsThroughJSON() throws {
        let money = Money(minorUnits: -123_456, currency: "CHF")
        let json = try JSONEncoder().encode(money)
        #expect(try JSONDecoder().decode(Money.self, from: json) == money)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(Set(object.keys) == ["minorUnits", "currency"])
    }

    @Test func digitsFollowISO4217AndDefaultToTwo() {
        #expect(Currency.digits("EUR") == 2)
        #expect(Currency.digits("JPY") == 0)
        #expect(Currency.digits("BHD") == 3)
        #expect(Currency.digits("QQQ") == 2)
    }

    @Test(arguments: ["EUR", "USD", "JPY", "ABC"])
    func threeCapitalLettersAreACodesForm(_ code: String) {
        #expect(Currency.isCode(code))
    }

    @Test(arguments: ["", "EU", "EURO", "eur", "Eur", "E1R", "ÉUR", " EU", "€"])
    func anythingElseIsNot(_ code: String) {
        #expect(!Currency.isCode(code))
    }

    @Test func knownCurrenciesAreTheTablesAndThoseInUse() {
        #expect(Currency.isKnown("EUR") && Currency.isKnown("BHD"))
        #expect(Currency.isKnown("AFN"), "in use, though not in the table of digits")
        #expect(!Currency.isKnown("ABC") && !Currency.isKnown("XXX") && !Currency.isKnown("eur"))
    }
}
