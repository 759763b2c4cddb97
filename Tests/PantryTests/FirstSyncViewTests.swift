import Foundation
import Testing

@Suite("The pantry's views that add items up say so while a first sync still brings them", .timeLimit(.minutes(5)), .tags(.endToEnd))
struct FirstSyncViewTests {
    @Test(arguments: Backend.available)
    func remindersPlacesAndExpiryListsSayTheRecordsAreStillArrivingInTextAndJSON(_ backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            // Given Ann's milk, bought at the market, expiring tomorrow, on a device whose first sync is done
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            try await ann.run(["add", "--name", "Milk", "--expires", "+1d", "--where", "Market"])
            try await ann.run(["sync"])
            let done = try jsonObject(try await ann.run(["reminders", "--json"], server: unreachableServer))
            #expect(done["incomplete"] as? Bool == false && done["arriving"] is NSNull, "\(done)")
            #expect(!(try await ann.run(["reminders"], server: unreachableServer).stdout.contains("still arriving")))

            // When a first sync stops while records arrive
            try await UnfinishedFirstSync.leave(in: scratch.folder("ann"), received: 1, total: 3)

            // Then the reminders, the places and an expiry list say the records are still arriving, in text
            let sentence = "Your records are still arriving (1 of 3 records): the figures below may be short until `pantry sync` has brought the rest."
            for view in [["reminders"], ["places"], ["list", "--expiring", "3d"], ["list", "--expired"]] {
                let shown = try await ann.run(view, server: unreachableServer)
                #expect(shown.stdout.replacingOccurrences(of: "\n", with: " ").contains(sentence), "\(view): \(shown.stdout)")
            }
            #expect(!(try await ann.run(["list"], server: unreachableServer).stdout.contains("still arriving")))
            // And in JSON: the whole view, or each row of a list
            let reminders = try jsonObject(try await ann.run(["reminders", "--json"], server: unreachableServer))
            #expect(reminders["incomplete"] as? Bool == true, "\(reminders)")
            let arriving = try #require(reminders["arriving"] as? [String: Any], "\(reminders)")
            #expect(arriving["received"] as? Int == 1 && arriving["total"] as? Int == 3, "\(arriving)")
            #expect((reminders["expiringSoon"] as? [[String: Any]])?.first?["name"] as? String == "Milk", "\(reminders)")
            for view in [["places", "--json"], ["list", "--expiring", "3d", "--json"]] {
                let rows = try jsonItems(try await ann.run(view, server: unreachableServer))
                #expect(!rows.isEmpty && rows.allSatisfy { $0["incomplete"] as? Bool == true }, "\(view): \(rows)")
            }
        }
    }
}
