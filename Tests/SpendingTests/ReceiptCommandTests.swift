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
            // And `edit --receipt` replaces the receipt, which the laptop saves after a sync
            var other = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            other.append(Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 3) }))
            let otherFile = folder.url.appendingPathComponent("other.png")
            try other.write(to: otherFile)
            let edited = try await phone.run(["edit", id, "--receipt", otherFile.path])
            #expect(edited.status == 0 && edited.stdout.contains("with its new receipt (20 KiB)"), "\(edited.stdout) \(edited.stderr)")
            #expect(try await phone.run(["sync"]).status == 0)
            #expect(try await laptop.run(["sync"]).status == 0)
            let savedOther = folder.url.appendingPathComponent("saved-other.png")
            #expect(try await laptop.run(["receipt", id, "--save", savedOther.path]).status == 0)
            #expect(try Data(contentsOf: savedOther) == other)
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
            #expect(added.stderr == "spendiq: \(file.path): it is not a JPEG, PNG or HEIC photo\n", "\(added.stderr)")
            #expect(added.stderr.split(separator: "\n").count == 1, "\(added.stderr)")
            #expect(try await SharedAccountsTests.json(phone, ["list"]).isEmpty)
            let missing = try await phone.run(["add", "expense", "3", "--account", "Cash", "--receipt", "/nonexistent/receipt.jpg"])
            #expect(missing.status != 0 && missing.stderr == "spendiq: /nonexistent/receipt.jpg: there is no such file, or it cannot be read\n", "\(missing.stderr)")
        }
    }
}

extension ReceiptCommandTests {
    @Test(arguments: Backend.available)
    func aReceiptGoesWithItsTransactionIntoASharedAccountAndTheOtherMemberReadsIt(_ backend: Backend) async throws {
        try await SharedAccountsTests.withServer(backend) { server, folder in
            // Given Alice's expense with its receipt, sent, and Bob
            let (alice, _) = try await SharedAccountsTests.person("alice", server, folder)
            let (bob, bobName) = try await SharedAccountsTests.person("bob", server, folder)
            #expect(try await alice.run(["accounts", "add", "Home", "--currency", "EUR"]).status == 0)
            var photo = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            photo.append(Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }))
            let file = folder.url.appendingPathComponent("bill.png")
            try photo.write(to: file)
            let added = try await alice.run(["add", "expense", "40", "--account", "Home", "--receipt", file.path])
            #expect(added.status == 0, "\(added.stderr)")
            let id = try #require(added.stdout.split(separator: "(").dropFirst().first.map { String($0.prefix(8)) })
            #expect(try await alice.run(["sync"]).status == 0)

            // When she shares the account with Bob, who accepts
            #expect(try await alice.run(["accounts", "share", "Home", "--with", bobName]).status == 0)
            #expect(try await alice.run(["sync"]).status == 0)
            let invitation = try await SharedAccountsTests.onlyInvitation(bob)
            #expect(try await bob.run(["accept", try #require(invitation["id"] as? String)]).status == 0)
            #expect(try await bob.run(["sync"]).status == 0)

            // Then the transaction still has its receipt, and Bob saves the same bytes
            #expect(try await alice.run(["receipt", id]).stdout.contains("PNG, 40 KiB, on this device"))
            let saved = folder.url.appendingPathComponent("bob-bill.png")
            let save = try await bob.run(["receipt", id, "--save", saved.path])
            #expect(save.status == 0, "\(save.stdout) \(save.stderr)")
            #expect(try Data(contentsOf: saved) == photo)
        }
    }

    @Test(arguments: Backend.available)
    func aReceiptThatIsNotOnTheDeviceThatSharesItsAccountIsFetchedAndSentToTheSharedSpace(_ backend: Backend) async throws {
        try await SharedAccountsTests.withServer(backend) { server, folder in
            // Given Alice's expense with its receipt, sent from her phone, and her laptop that never read it
            let (phone, _) = try await SharedAccountsTests.person("alice", server, folder)
            let (bob, bobName) = try await SharedAccountsTests.person("bob", server, folder)
            #expect(try await phone.run(["accounts", "add", "Home", "--currency", "EUR"]).status == 0)
            var photo = Data([0xFF, 0xD8, 0xFF, 0xE0])
            photo.append(Data((0..<600_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }))
            let file = folder.url.appendingPathComponent("bill.jpg")
            try photo.write(to: file)
            let added = try await phone.run(["add", "expense", "40", "--account", "Home", "--receipt", file.path])
            let id = try #require(added.stdout.split(separator: "(").dropFirst().first.map { String($0.prefix(8)) })
            #expect(try await phone.run(["sync"]).status == 0)
            let email = try #require((try await phone.run(["whoami", "--json"]).json() as? [String: Any])?["email"] as? String)
            let laptop = CommandProcess.spendiq(dataDirectory: folder.folder("laptop"), server: server)
            #expect(try await laptop.run(["login", "--email", email, "--password-stdin"], input: "long-password\n").status == 0)
            #expect(try await laptop.run(["receipt", id]).stdout.contains("not on this device"))
            // (and its lists say the transaction has a receipt)
            let listed = try await SharedAccountsTests.json(laptop, ["list"])
            #expect((listed.first?["receipt"] as? String)?.hasPrefix("sha256:") == true, "\(listed)")
            #expect(try await laptop.run(["list"]).stdout.contains("[receipt]"))

            // When she shares the account from the laptop, and it syncs
            let shared = try await laptop.run(["accounts", "share", "Home", "--with", bobName])
            #expect(shared.status == 0, "\(shared.stderr)")
            let sync = try await laptop.run(["sync"])
            #expect(sync.status == 0, "\(sync.stdout) \(sync.stderr)")
            #expect(!(try await laptop.run(["status"]).stdout.contains("to upload")))

            // Then Bob, once in, saves the same bytes from the shared account
            let invitation = try await SharedAccountsTests.onlyInvitation(bob)
            #expect(try await bob.run(["accept", try #require(invitation["id"] as? String)]).status == 0)
            #expect(try await bob.run(["sync"]).status == 0)
            let saved = folder.url.appendingPathComponent("bob-bill.jpg")
            let save = try await bob.run(["receipt", id, "--save", saved.path])
            #expect(save.status == 0, "\(save.stdout) \(save.stderr)")
            #expect(try Data(contentsOf: saved) == photo)
        }
    }
}

extension ReceiptCommandTests {
    /// A receipt the server refuses (past the person's quota) marks its transaction (`!`),
    /// `failures` names the transaction, and discarding the upload clears the receipt on every
    /// device, so that none says "not uploaded yet" for ever.
    @Test(arguments: Backend.available)
    func aRefusedReceiptMarksItsTransactionAndDiscardingItClearsTheReceiptOnEveryDevice(_ backend: Backend) async throws {
        try await SharedAccountsTests.withServer(backend, configure: { $0.quotas.bytesPerUser = 30_000 }) { server, folder in
            // Given Alice's expense with a receipt larger than what the server leaves her, and one without
            let (phone, _) = try await SharedAccountsTests.person("alice", server, folder)
            #expect(try await phone.run(["accounts", "add", "Cash", "--currency", "EUR"]).status == 0)
            var photo = Data([0xFF, 0xD8, 0xFF, 0xE0])
            photo.append(Data((0..<60_000).map { UInt8(truncatingIfNeeded: $0 &* 29) }))
            let file = folder.url.appendingPathComponent("receipt.jpg")
            try photo.write(to: file)
            let added = try await phone.run(["add", "expense", "12.50", "--account", "Cash", "--receipt", file.path], server: unreachableServer)
            #expect(added.status == 0, "\(added.stderr)")
            let id = try #require(added.stdout.split(separator: "(").dropFirst().first.map { String($0.prefix(8)) })
            #expect(try await phone.run(["add", "expense", "3", "--account", "Cash"], server: unreachableServer).status == 0)

            // When she syncs: the expenses go, the receipt is refused; her laptop signs in
            #expect(try await phone.run(["sync"]).status != 0)
            let email = try #require((try await phone.run(["whoami", "--json"]).json() as? [String: Any])?["email"] as? String)
            let laptop = CommandProcess.spendiq(dataDirectory: folder.folder("laptop"), server: server)
            #expect(try await laptop.run(["login", "--email", email, "--password-stdin"], input: "long-password\n").status == 0)
            // NB: what the finding saw: the laptop is told the receipt comes, and it never does
            #expect(try await laptop.run(["receipt", id, "--save", folder.url.appendingPathComponent("saved.jpg").path]).stderr
                .contains("uploaded yet"))

            // Then her list marks the expense as refused, with why, and not the other
            let list = try await phone.run(["list"], server: unreachableServer)
            let marked = list.stdout.split(separator: "\n").filter { $0.contains("EUR") && $0.trimmingCharacters(in: .whitespaces).hasPrefix("!") }
            #expect(marked.count == 1 && marked.first?.contains(id) == true, "\(list.stdout)")
            #expect(list.stdout.contains("! refused by the server: spendiq failures"), "\(list.stdout)")
            let rows = try #require(try await phone.run(["list", "--json"], server: unreachableServer).json() as? [[String: Any]])
            let state = try #require(rows.first { ($0["id"] as? String)?.hasSuffix(id) == true }?["syncState"] as? [String: Any], "\(rows)")
            #expect(state["state"] as? String == "failed"
                    && (state["reason"] as? String)?.hasPrefix("the upload of its receipt was refused: ") == true, "\(state)")
            // And `failures` names the transaction the receipt belongs to, in words and in JSON
            let failures = try await phone.run(["failures"], server: unreachableServer)
            #expect(failures.stdout.contains("receipt of expense EUR 12.50 on Cash, 59 KiB"), "\(failures.stdout)")
            let listed = try #require(try await phone.run(["failures", "--json"], server: unreachableServer).json() as? [[String: Any]])
            let refused = try #require(listed.first { $0["kind"] as? String == "call" }, "\(listed)")
            #expect((refused["recordId"] as? String)?.hasSuffix(id) == true && refused["collection"] as? String == "spending_transactions",
                    "\(refused)")

            // When she discards the refused upload, the message says the expense loses its receipt
            let discard = try await phone.run(["discard", try #require(refused["shortId"] as? String)])
            #expect(discard.status == 0 && discard.stdout.replacingOccurrences(of: "\n", with: " ")
                .contains("expense EUR 12.50 on Cash no longer has a receipt"), "\(discard.stdout)\(discard.stderr)")
            // And once both sync, no device says a receipt comes: the expense has none, and nothing is marked
            #expect(try await phone.run(["sync"]).status == 0)
            #expect(try await laptop.run(["sync"]).status == 0)
            for device in [phone, laptop] {
                let shown = try await device.run(["receipt", id])
                #expect(shown.status != 0 && shown.stderr.contains("has no receipt"), "\(shown.stdout)\(shown.stderr)")
                let after = try await device.run(["list"])
                #expect(!after.stdout.contains("[receipt]") && !after.stdout.contains("!"), "\(after.stdout)")
            }
            #expect(try await phone.run(["failures"]).stdout.contains("Nothing was refused."))
        }
    }
}
