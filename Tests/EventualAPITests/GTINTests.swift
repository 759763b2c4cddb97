import Testing
import EventualAPI

@Suite("GTIN: barcode rules")
struct GTINTests {
    @Test(arguments: [
        ("96385074", "00000096385074"),          // EAN-8
        ("049000028911", "00049000028911"),      // UPC-A
        ("3017620422003", "03017620422003"),     // EAN-13
        ("10012345678902", "10012345678902"),    // GTIN-14
    ])
    func validCodesNormaliseToFourteenDigits(_ raw: String, _ normalized: String) throws {
        #expect(try GTIN(raw).normalized == normalized)
    }

    @Test func upcAAndItsEAN13FormAreOneGTIN() throws {
        #expect(try GTIN("049000028911") == GTIN("0049000028911"))
    }

    @Test(arguments: ["96385075", "049000028912", "3017620422004", "10012345678903"])
    func wrongCheckDigitIsRefused(_ raw: String) {
        #expect(throws: GTINError.self) { try GTIN(raw) }
        do {
            _ = try GTIN(raw)
        } catch {
            #expect(error.description.contains("check digit"))
        }
    }

    @Test(arguments: ["", "1234567", "123456789", "12345678901", "123456789012345", "30176204220O3", " 3017620422003", "+96385074"])
    func malformedCodesAreRefused(_ raw: String) {
        #expect(throws: GTINError.self) { try GTIN(raw) }
    }

    @Test func typedCodesMayCarrySpacesAndDashes() throws {
        #expect(try GTIN(typed: "4 006381-333931") == GTIN("4006381333931"))
        #expect(throws: GTINError.notDigits) { try GTIN(typed: "4006381333931x") }
    }

    @Test func shortFormDropsThePaddingPeopleNeverType() throws {
        #expect(try GTIN("96385074").shortForm == "96385074")
        #expect(try GTIN("049000028911").shortForm == "0049000028911")
        #expect(try GTIN("10012345678902").shortForm == "10012345678902")
    }

    @Test func checkDigitFollowsGS1Weights() {
        // 400638133393? → 1 (a well-known EAN-13 example: 4006381333931)
        #expect(GTIN.checkDigit(for: [4, 0, 0, 6, 3, 8, 1, 3, 3, 3, 9, 3]) == 1)
        #expect(GTIN.checkDigit(for: [9, 6, 3, 8, 5, 0, 7]) == 4)
    }
}
