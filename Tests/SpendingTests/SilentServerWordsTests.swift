import Foundation
import Testing

/// A server that takes the connection and never answers (issue 46, item 15), through the built command.
@Suite("spendiq against a server that does not answer", .timeLimit(.minutes(4)), .tags(.endToEnd))
struct SilentServerWordsTests {
    @Test func offersAndInsightsSayTheServerIsNotAnsweringNotThatThereIsNoConnection() async throws {
        try await withLiveServer { server, scratch in
            // Given a signed-in device that never loaded offers or insights
            let device = try await CommandLineTests.signedIn(server, scratch)
            try await withSilentServer { silent in
                // When the server takes the connection and sends nothing
                for arguments in [["offers", "--near", "43.7394,7.4278"], ["insights"]] {
                    let started = ContinuousClock.now
                    let said = try await device.run(arguments, server: silent, answerTimeout: nil)
                    // Then it says so in one line, within the read's 4 s and a little
                    #expect(said.status == 1 && said.isOneLineError, "\(arguments): \(said.stderr)")
                    #expect(said.stderr.contains("The server is not answering") && !said.stderr.contains("Connect to"), "\(arguments): \(said.stderr)")
                    #expect(ContinuousClock.now - started < .seconds(8), "\(arguments)")
                }
            }
        }
    }
}
