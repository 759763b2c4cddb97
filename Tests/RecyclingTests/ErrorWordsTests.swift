import Testing
@testable import Recycling

/// The Recycling model's errors say what is wrong in words a phone could show; how to act on one
/// (a command's options) is the command's to add.
@Suite("SustainU's errors speak no command's language")
struct ErrorWordsTests {
    static let errors: [RecyclingError] = [
        .notSignedIn, .signInAgain(email: "a@example.com"), .needsConnectionForPoints, .needsConnection(what: "tips", reason: "offline"), .noSuchPoint("node/1"),
        .invalidPosition("x"), .invalidBarcode("12"), .nothingToScan, .unreadablePhoto(path: "/tmp/a.jpg", reason: "empty"),
        .photoTooLarge(path: "/tmp/a.jpg", bytes: 5 << 20), .notAPhoto(path: "/tmp/a.txt"), .unknownTrashType("x"), .invalidTime("x"),
        .invalidLimit(0), .invalidLeaderboardLimit(0),
    ]

    @Test(arguments: errors) func saysNoOptionNorCommand(_ error: RecyclingError) {
        let text = error.description
        #expect(!text.contains("--") && !text.contains("`") && !text.contains("sustainu "), "\(text)")
    }

    @Test func aPhotoTooLargeIsSaidToATenthOfAMiBAboveTheLimit() {
        #expect(RecyclingError.photoTooLarge(path: "a.jpg", bytes: 5_001_000).description.contains("a.jpg is 4.8 MiB; the most"))
        #expect(RecyclingError.photoTooLarge(path: "a.jpg", bytes: (4 << 20) + 1).description.contains("a.jpg is 4.1 MiB; the most"))
        #expect(RecyclingError.photoTooLarge(path: "a.jpg", bytes: 5 << 20).description.contains("a.jpg is 5.0 MiB; the most"))
    }
}
