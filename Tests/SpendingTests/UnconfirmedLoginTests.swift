import EventualAPI
import Foundation
import Testing

/// A SpendiQ sign-in of an account registered in the pantry (issue 46, item 7), through the built commands.
@Suite("spendiq login for an account whose email is not confirmed", .timeLimit(.minutes(4)), .tags(.endToEnd))
struct UnconfirmedLoginTests {
    @Test func aLoginRefusedForAnEmailNotConfirmedSaysHowToConfirmItAndRemembersTheEmail() async throws {
        try await withLiveServer { server, scratch in
            // Given ben, registered and signed in through the pantry (which mails no code)
            let pantry = CommandProcess.pantry(dataDirectory: scratch.folder("pantry"), server: server)
            let (email, username) = try await pantry.signUp(name: "ben")
            let spendiq = CommandProcess.spendiq(dataDirectory: scratch.folder("spendiq"), server: server)

            // When he logs in to SpendiQ
            let login = try await spendiq.run(["login", "--email", email, "--password-stdin"], input: "long-password\n")
            // Then it says what to do, never that a code was mailed
            #expect(login.status == 1 && login.isOneLineError, "\(login.stdout)\(login.stderr)")
            #expect(!login.stderr.contains("mailed you") && login.stderr.contains("not confirmed yet"), "\(login.stderr)")
            #expect(login.stderr.contains("`spendiq verify --resend` mails you a code"), "\(login.stderr)")

            // And the resend it points to needs no --email: the login had it
            let resend = try await spendiq.run(["verify", "--resend"])
            #expect(resend.status == 0 && resend.stdout.contains(email), "\(resend.stdout)\(resend.stderr)")
            let verified = try await spendiq.run(["verify", try mailedCode(scratch, to: email)])
            #expect(verified.status == 0, "\(verified.stderr)")
            let again = try await spendiq.run(["login", "--email", email, "--password-stdin"], input: "long-password\n")
            #expect(again.status == 0 && again.stdout.contains("Signed in as \(username)"), "\(again.stdout)\(again.stderr)")
        }
    }
}
