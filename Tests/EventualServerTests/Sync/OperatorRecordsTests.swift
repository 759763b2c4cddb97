import EventualAPI
import EventualStorage
import Foundation
import Logging
import Testing
@testable import EventualServer

/// An operator's fix of one record (`eventual-server records`) goes through the sync path: a new
/// seq, so a device that pulled before hears of it; a refusal in one line; SQL would reach no one.
@Suite("Sync: an operator's fix of one record", .timeLimit(.minutes(2)))
struct OperatorRecordsTests {
    @Test(arguments: Backend.available)
    func anEditAndADeletionReachADeviceThatPulledBefore(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            // Given alice's item, pulled by her device
            let alice = try await api.signUp("alice")
            _ = try await api.pushed([SyncChangeJSON(recordId: "spam", hlc: Stamps.at(-5000), fields: pantryItem(["name": "Buy now!!"]))], as: alice)
            let before = try await api.pulled(as: alice)
            #expect(before.changes.map(\.recordId) == ["spam"])
            let database = try await Database.open(location, logger: Logger(label: "test"))
            defer { Task { await database.close() } }
            let records = OperatorRecords(database: database)

            // When the operator renames it
            let shown = try await records.set(space: alice.id, collection: "pantry_items", recordID: "spam", values: ["name": "Oat milk", "quantity": "2"])
            #expect(shown.contains(#""name":"Oat milk""#) && shown.contains(#""quantity":2"#))
            // Then her device, pulling on from its cursor, receives the fix
            let after = try await api.pulled(since: before.cursor, as: alice)
            #expect(after.changes.map(\.recordId) == ["spam"] && after.changes.first?.fields["name"] == "Oat milk")

            // When the operator deletes it, the device hears that too
            try await records.delete(space: alice.id, collection: "pantry_items", recordID: "spam")
            let deleted = try await api.pulled(since: after.cursor, as: alice)
            #expect(deleted.changes.map(\.deleted) == [true])
        }
    }

    @Test(arguments: Backend.available)
    func aMistakeIsOneLineAndChangesNothing(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let alice = try await api.signUp("alice")
            _ = try await api.pushed([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-5000), fields: pantryItem())], as: alice)
            let database = try await Database.open(location, logger: Logger(label: "test"))
            defer { Task { await database.close() } }
            let records = OperatorRecords(database: database)
            let cases: [(String, [String: String], String)] = [
                ("milk", ["colour": "white"], "has no field colour"),
                ("milk", ["quantity": "lots"], "takes a number"),
                ("milk", ["quantity": "-1"], "below 0"),
                ("nothing", ["name": "x"], "no pantry_items record nothing"),
                ("milk", ["name": "a\u{0}b"], "must not contain"),
                ("milk", ["name": String(repeating: "x", count: 10_000)], "at most"),
            ]
            for (id, values, words) in cases {
                await #expect { try await records.set(space: alice.id, collection: "pantry_items", recordID: id, values: values) } throws: { error in
                    "\(error)".contains(words) && !"\(error)".contains("\n")
                }
            }
            await #expect(throws: OperatorRecords.Failure.self) { try await records.show(space: "no-such-space", collection: "pantry_items", recordID: "milk") }
            #expect(try await api.pulledRecords(as: alice)["milk"]?.fields["quantity"] == 1)
        }
    }
}
