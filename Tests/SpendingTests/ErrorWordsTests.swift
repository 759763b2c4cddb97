import Testing
@testable import Spending

/// The Spending model's errors say what is wrong in words a phone could show; how to act on one
/// (a command's options) is the command's to add.
@Suite("SpendiQ's errors speak no command's language")
struct ErrorWordsTests {
    static let errors: [SpendingError] = [
        .notSignedIn, .invalidAmount("x"), .amountTooLarge("1e20", currency: "EUR"), .negativeAmount("-5"), .currencyMismatch("$5", currency: "EUR"),
        .ambiguousAmount("1.234", currency: "EUR", digits: 2, readings: ["1.23", "1234"]), .tooManyDecimals("1.234", currency: "EUR", digits: 2, typed: 3),
        .mixedDecimalSeparators(dot: "1.5", comma: "1,5"), .undecidedDecimalSeparator(example: "1,234"), .invalidCurrency("XXX"),
        .invalidDate("x"), .futureDate("9999-12-31"), .dateOutOfRange("1900-01-01"), .undecidedDateOrder(example: "01/02/2026"),
        .mixedDateOrders(dayFirst: "20/11/2026", monthFirst: "11/20/2026"), .invalidColour("x"), .invalidCoordinates("x"),
        .nothingToChange(fields: ["name", "kind", "colour"]), .whichAccount(ofFile: false), .whichAccount(ofFile: true),
        .amountNeeded(account: "Savings", currency: "USD"), .invalidDays(0), .unknownColumn("x"),
        .missingColumn(file: "bank.csv", column: "date", header: "Fecha, Importe"), .invalidRadius(0), .invalidOfferLimit(0),
        .noSuchAccount("Wallet"), .ambiguousAccount("Wallet", ids: ["01a2b3c4", "01a2b3c5"]), .accountExists("Wallet"),
        .archivedAccount("Wallet"), .noSuchTransaction("01a2b3c4"), .ambiguousTransaction("01", matches: 2), .idTooShort("01"),
        .transferCurrencies(from: "EUR", to: "USD"), .transferToItself, .notVerified, .wipedAfterOfflineAge(days: 7),
        .offlineTooLongWithPendingChanges(days: 7, count: 2, email: "carol@example.com"), .otherPersonOnDevice(username: "carol"),
        .noPosition, .offersNeedConnection, .insightsNeedConnection, .noPendingRegistration,
        .exportExists("/tmp/a.csv"), .exportNotAFile("/dev/null"),
    ]

    @Test(arguments: errors) func saysNoOptionNorCommand(_ error: SpendingError) {
        let text = error.description
        #expect(!text.contains("--") && !text.contains("`") && !text.contains("spendiq "), "\(text)")
    }

    @Test func fieldsToChangeAreListedInWords() {
        #expect(SpendingError.nothingToChange(fields: ["name", "kind", "colour"]).description == "Nothing to change: give a new name, kind or colour")
    }
}
