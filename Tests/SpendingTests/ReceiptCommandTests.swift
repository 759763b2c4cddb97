import Foundation
import Testing

@Suite("Receipts through the spendiq command: attached offline, uploaded once, saved on another device", .timeLimit(.minutes(5)),
       .tags(.endToEnd))
struct ReceiptCommandTests {
    @Test(arguments: Backend.available)
    func aReceiptAttachedOfflineIsUploadedWithTheNextSyncAndSavedOnAnotherDevice(_ backend: Backend) async throws {
        try await SharedAccountsTests.withServer(backend) { server, folder in
            // Given Alice's phone with an account, and a photo of a receipt
            let (phone, _) = try await SharedAccountsTests.person("alice", server, folder)
            #expect(try await phone.run(["accounts", "add", "Cash", "--currency", "EUR"]).status == 0)
            var photo = Data([0xFF, 0xD8, 0xFF, 0xE0])
            photo.append(Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
            let file = folder.url.appendingPathComponent("receipt.jpg")
            try photo.write(to: file)

            // When she records an expense with it in the basement
            let added = try await phone.run(["add", "expense", "12.50", "--account", "Cash", "--receipt", file.path], server: unreachableServer)
            #expect(added.status == 0, "\(added.stderr)")
            #expect(added.stdout.contains("with its receipt (293 KiB)"), "\(added.stdout)")
            let id = try #require(added.stdout.split(separator: "(").dropFirst().first.map { String($0.prefix(8)) })
            // Then the phone keeps it, and says it waits
            let status = try await phone.run(["status"], server: unreachableServer)
            #expect(status.stdout.contains("1 attachment (293 KiB) to upload"), "\(status.stdout)")
            let waiting = try await phone.run(["receipt", id], server: unreachableServer)
            // NB: the line is wrapped at 80 columns
            #expect(waiting.stdout.replacingOccurrences(of: "\n", with: " ").contains("JPEG, 293 KiB, on this device, waiting to be uploaded"),
                    "\(waiting.stdout) \(waiting.stderr)")

            // And once back online it is sent with the sync
            #expect(try await phone.run(["sync"]).status == 0)
            #expect(!(try await phone.run(["status"]).stdout.contains("to upload")))

            // And on her laptop the transaction comes with it, and --save writes the same bytes
            let email = try #require((try await phone.run(["whoami", "--json"]).json() as? [String: Any])?["email"] as? String)
            let laptop = CommandProcess.spendiq(dataDirectory: folder.folder("laptop"), server: server)
            #expect(try await laptop.run(["login", "--email", email, "--password-stdin"], input: "long-password\n").status == 0)
            let elsewhere = try await laptop.run(["receipt", id])
            #expect(elsewhere.stdout.contains("not on this device (--save FILE downloads it)"), "\(elsewhere.stdout) \(elsewhere.stderr)")
            let saved = folder.url.appendingPathComponent("saved.jpg")
            let save = try await laptop.run(["receipt", id, "--save", saved.path])
            #expect(save.status == 0, "\(save.stderr)")
            #expect(try Data(contentsOf: saved) == photo)
            // And it never writes over a file
            let again = try await laptop.run(["receipt", id, "--save", saved.path])
            #expect(again.status != 0 && again.stderr.contains("exists already"), "\(again.stderr)")
        }
    }

    @Test(arguments: Backend.available)
    func aFileThatIsNotAPhotoIsRefusedInOneLineAndNothingIsRecorded(_ backend: Backend) async throws {
        try await SharedAccountsTests.withServer(backend) { server, folder in
            let (phone, _) = try await SharedAccountsTests.person("alice", server, folder)
            #expect(try await phone.run(["accounts", "add", "Cash", "--currency", "EUR"]).status == 0)
            let file = folder.url.appendingPathComponent("notes.txt")
            try Data("not a photo".utf8).write(to: file)
            let added = try await phone.run(["add", "expense", "3", "--account", "Cash", "--receipt", file.path])
            #expect(added.status != 0)
            #expect(added.stderr.contains("Only JPEG, PNG and HEIC images can be attached"), "\(added.stderr)")
            #expect(added.stderr.split(separator: "\n").count == 1, "\(added.stderr)")
            #expect(try await SharedAccountsTests.json(phone, ["list"]).isEmpty)
            let missing = try await phone.run(["add", "expense", "3", "--account", "Cash", "--receipt", "/nonexistent/receipt.jpg"])
            #expect(missing.status != 0 && missing.stderr.contains("cannot read '/nonexistent/receipt.jpg'"), "\(missing.stderr)")
        }
    }
}
