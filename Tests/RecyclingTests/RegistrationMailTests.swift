import Foundation
import Testing

/// A SustainU registration names its app, so the server mails it no verification code: only
/// SpendiQ asks for a verified email (a SustainU student used to get a "spendiq verify" mail).
@Suite("Registration mail", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct RegistrationMailTests {
    @Test func aSustainURegistrationIsMailedNoCode() async throws {
        try await withLiveServer { server, scratch in
            // Given a student who registers with sustainu
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            let (email, _) = try await phone.signUp()
            // Then the server's mail folder holds no mail to them
            let folder = scratch.url.appendingPathComponent("mail")
            let mails = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            let toThem = try mails.filter { name in
                try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8).contains(email)
            }
            #expect(toThem.isEmpty, "mailed: \(toThem)")
        }
    }
}
