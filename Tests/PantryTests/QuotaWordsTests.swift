import EventualAPI
import Foundation
import Testing

/// A person at the record quota (issue 46, items 5 and 6), through the built command.
@Suite("pantry at the record quota", .timeLimit(.minutes(5)), .tags(.endToEnd))
struct QuotaWordsTests {
    @Test func aNewItemPastTheQuotaIsSaidRefusedAtOnceWithWhatFreesRoomAndDeleteRemovesItForGood() async throws {
        try await withLiveServer(configure: { $0.quotas.syncRecordsPerUser = 3 }) { server, scratch in
            // Given ben with 3 synced items, his quota
            let ben = try await PantryPerson.signUp("ben", server: server, scratch: scratch)
            for name in ["Eggs", "Milk", "Rice"] { try await ben.run(["add", "--name", name]) }
            try await ben.run(["sync"])

            // When he adds a fourth
            let added = try await ben.run(["add", "--name", "Figs"])
            let said = added.stdout.replacingOccurrences(of: "\n", with: " ")

            // Then the command says the server refused it, whose quota it is and what frees room, never that it waits
            #expect(said.contains("The server refused it: Quota reached: you store 3 synced records"), "\(said)")
            #expect(said.contains("`pantry delete ID` deletes an item for good") && said.contains("in every app"), "\(said)")
            #expect(!said.contains("waits") && !said.contains("next sync"), "\(said)")
            #expect(added.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(added.stdout)")
            let status = try #require(try await ben.run(["status", "--json"]).json() as? [String: Any])
            #expect(status["failed"] as? Int == 1 && status["pending"] as? Int == 0, "\(status)")

            // And the refused item, which the server never had, is settled, not deleted (a deletion would be a record there)
            let figs = try await ben.pantry.run(["delete", String(try await ben.itemID("Figs").suffix(8))])
            #expect(figs.status == 1 && figs.stderr.contains("The server never had Figs") && figs.stderr.contains("--discard` drops it"), "\(figs.stderr)")

            // When he deletes an item for good, and every one thrown away
            try await ben.run(["remove", try await ben.itemID("Rice")])
            let deleted = try await ben.run(["delete", String(try await ben.itemID("Eggs").suffix(8))])
            #expect(deleted.stdout.hasPrefix("Deleted Eggs for good."), "\(deleted.stdout)")
            let gone = try await ben.run(["delete", "--gone"])
            #expect(gone.stdout.hasPrefix("Deleted for good 1 item used up or thrown away."), "\(gone.stdout)")

            // Then his other device no longer has them, not even as thrown away
            let phone = CommandProcess.pantry(dataDirectory: scratch.folder("ben-phone"), server: server)
            // (the address `signUp` gave him: ben_abc123 is ben.abc123@example.com)
            let email = ben.username.replacingOccurrences(of: "_", with: ".") + "@example.com"
            #expect(try await phone.run(["login", "--email", email, "--password-stdin"], input: "long-password\n").status == 0)
            let names = try jsonItems(try await phone.run(["list", "--json"])).compactMap { $0["name"] as? String }
            #expect(names == ["Milk"], "\(names)")
            let usage = try await ben.pantry.run(["delete"])
            #expect(usage.status == 64 && usage.isOneLineError, "\(usage.stderr)")
        }
    }
}
