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

    /// The week of use: `login` on a new device against a silent server said "No connection".
    @Test func aLoginOnANewDeviceAgainstASilentServerSaysItIsNotAnswering() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        do {
            try await withSilentServer { silent in
                let pantry = CommandProcess.pantry(dataDirectory: scratch.folder("new-device"), server: silent)
                let login = try await pantry.run(["login", "--email", "nobody@example.com", "--password-stdin"], input: "long-password\n",
                                                 answerTimeout: nil)
                #expect(login.status != 0 && login.isOneLineError, "\(login.stdout)\(login.stderr)")
                #expect(login.stderr.contains("accepted the connection but did not answer") && login.stderr.contains("no saved sign-in"),
                        "\(login.stderr)")
                #expect(!login.stderr.contains("No connection"), "\(login.stderr)")
            }
        }
    }
}
