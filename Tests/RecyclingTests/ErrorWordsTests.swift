import Testing
@testable import Recycling

/// The Recycling model's errors say what is wrong in words a phone could show; how to act on one
/// (a command's options) is the command's to add.
@Suite("SustainU's errors speak no command's language")
struct ErrorWordsTests {
    static let errors: [RecyclingError] = [
        .notSignedIn, .signInAgain(email: "a@example.com"), .needsConnectionForPoints, .needsConnection(what: "tips", reason: "offline"), .noSuchPoint("node/1"),
        .invalidPosition("x"), .invalidBarcode("12"), .nothingToScan, .photo(path: "/tmp/a.jpg", problem: .empty),
        .photo(path: "/tmp/a.jpg", problem: .tooLarge(bytes: 21 << 20)), .photo(path: "/tmp/a.txt", problem: .notAnImage), .unknownTrashType("x"), .invalidTime("x"),
        .invalidLimit(0), .invalidLeaderboardLimit(0),
    ]

    @Test(arguments: errors) func saysNoOptionNorCommand(_ error: RecyclingError) {
        let text = error.description
        #expect(!text.contains("--") && !text.contains("`") && !text.contains("sustainu "), "\(text)")
    }

    /// A photo too large is said as every app says an attachment too large: its path once, and a
    /// tenth of a MiB rounded up (never "20.0 MiB; at most 20.0 MiB").
    @Test func aPhotoTooLargeIsSaidToATenthOfAMiBAboveTheLimit() {
        #expect(RecyclingError.photo(path: "a.jpg", problem: .tooLarge(bytes: (20 << 20) + 1)).description
                == "a.jpg: the file is 20.1 MiB; an attachment is at most 20.0 MiB")
        #expect(RecyclingError.photo(path: "a.jpg", problem: .tooLarge(bytes: 25 << 20)).description.hasPrefix("a.jpg: the file is 25.0 MiB;"))
    }
}
