import Testing
@testable import Pantry

/// The Pantry model's errors say what is wrong in words a phone could show; how to act on one
/// (a command's options) is the command's to add.
@Suite("Pantry's errors speak no command's language")
struct ErrorWordsTests {
    static let errors: [PantryError] = [
        .notSignedIn, .signInAgain(email: "a@example.com"), .invalidBarcode("12"), .noSavedCopy(barcode: "4006381333931"), .noSuchItem("abc"), .emptyItemID, .itemIDTooShort("8"), .ambiguousItem("a", matches: 2),
        .noCandidates(barcode: "4006381333931"), .pickOutOfRange(3, count: 2), .invalidExpiry("x"), .invalidWindow("x"),
        .invalidCoordinates("x"), .invalidQuantity("x"), .invalidRating(9), .unknownProduct("x"), .itemNotInPantry("Tea"),
    ]

    @Test(arguments: errors) func saysNoOptionNorCommand(_ error: PantryError) {
        let text = error.description
        #expect(!text.contains("--") && !text.contains("`") && !text.contains("pantry "), "\(text)")
    }
}
