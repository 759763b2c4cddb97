import Foundation
import Testing

/// A server that takes the connection and never answers (issue 46, item 15), through the built command.
@Suite("pantry against a server that does not answer", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct SilentServerWordsTests {
    @Test func aLookUpWithNoSavedCopySaysTheServerIsNotAnsweringNotThatThereIsNoConnection() async throws {
        try await withLiveServer { server, scratch in
            let (pantry, _) = try await signedInProcess(server, scratch)
            try await withSilentServer { silent in
                // When a barcode never looked up here is scanned while the server sends nothing
                let started = ContinuousClock.now
                let scan = try await pantry.run(["scan", "4006381333931", "--pick", "1"], server: silent, answerTimeout: nil)
                // Then it says the server is not answering, in one line, within the look-up's 4 s and a little
                #expect(scan.status == 1 && scan.isOneLineError, "\(scan.stderr)")
                #expect(scan.stderr.hasPrefix("pantry: The server is not answering, and there is no saved copy of 4006381333931"), "\(scan.stderr)")
                #expect(ContinuousClock.now - started < .seconds(8))
            }
            // And a server that refuses the connection is still "No connection"
            let refused = try await pantry.run(["scan", "4006381333931", "--pick", "1"], server: unreachableServer)
            #expect(refused.stderr.hasPrefix("pantry: No connection and no saved copy"), "\(refused.stderr)")
        }
    }
}
