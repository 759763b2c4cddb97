import EventualAPI
import Foundation
import Testing
@testable import EventualServer

@Suite("Sync: counter fields over HTTP", .timeLimit(.minutes(2)))
struct SyncCounterTests {
    @Test(arguments: Backend.available)
    func deltasFromTwoDevicesAddUpOnceEach(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            // Given six bananas
            let (made, fromAStamp, fromBStamp) = (Stamps.at(-5000), Stamps.at(-3000, node: "deviceA"), Stamps.at(-2000, node: "deviceB"))
            _ = try await api.pushed([SyncChangeJSON(recordId: "bananas", hlc: made, fields: pantryItem(["quantity": 6]))], as: account)
            // When device A took 2 and device B took 1, and A's push is replayed after a lost answer
            let fromA = SyncChangeJSON(recordId: "bananas", hlc: fromAStamp, deltas: ["quantity": -2])
            let fromB = SyncChangeJSON(recordId: "bananas", hlc: fromBStamp, deltas: ["quantity": -1])
            #expect(try await api.pushed([fromB], as: account).map(\.status) == ["applied"])
            #expect(try await api.pushed([fromA], as: account).map(\.status) == ["applied"])
            #expect(try await api.pushed([fromA], as: account).map(\.status) == ["duplicate"])
            // Then the server holds 3
            #expect(try await api.pulledRecords(as: account)["bananas"]?.fields["quantity"] == .integer(3))
        }
    }

    @Test(arguments: Backend.available)
    func aSetKeepsOnlyTheDeltasStampedAfterIt(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            // NB: every stamp taken now, so that a slow machine cannot reorder them between pushes.
            let (made, earlierDelta, set, laterDelta) = (Stamps.at(-9000), Stamps.at(-3000, node: "b"), Stamps.at(-2000, node: "a"),
                                                         Stamps.at(-1000, node: "a"))
            _ = try await api.pushed([SyncChangeJSON(recordId: "flour", hlc: made, fields: pantryItem(["quantity": 10]))], as: account)
            // A later delta arrives first, then the set stamped before it, then an earlier delta
            _ = try await api.pushed([SyncChangeJSON(recordId: "flour", hlc: laterDelta, deltas: ["quantity": -1])], as: account)
            _ = try await api.pushed([SyncChangeJSON(recordId: "flour", hlc: set, fields: ["quantity": 2])], as: account)
            _ = try await api.pushed([SyncChangeJSON(recordId: "flour", hlc: earlierDelta, deltas: ["quantity": -3])], as: account)
            #expect(try await api.pulledRecords(as: account)["flour"]?.fields["quantity"] == .integer(1))
        }
    }

    @Test(arguments: Backend.available)
    func aDeltaOfAFieldThatIsNotACounterIsRejectedWithItsReason(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let results = try await api.pushed([
                SyncChangeJSON(recordId: "x", hlc: Stamps.at(-1000), deltas: ["boughtAt": 1]),
                SyncChangeJSON(recordId: "y", hlc: Stamps.at(-1000), deltas: ["nonsense": 1]),
            ], as: account)
            #expect(results.map(\.status) == ["rejected", "rejected"])
            #expect(results[0].message?.contains("not a counter") == true)
            #expect(results[1].message?.contains("unknown field") == true)
        }
    }
}
