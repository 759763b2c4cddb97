import EventualAPI
import Foundation
import Testing
@testable import EventualServer

@Suite("A sync record's merged state")
struct SyncRecordStateTests {
    func change(_ stamp: String, fields: [String: SyncValue] = [:], deltas: [String: Double] = [:], deleted: Bool = false) -> ValidatedChange {
        ValidatedChange(collection: "pantry_items", recordID: "r", stamp: HLCStamp(parsing: stamp)!, fields: fields, deltas: deltas,
                        deleted: deleted)
    }

    func stamp(_ millis: Int64, node: String = "aaaa") -> String { HLCStamp(millis: millis, counter: 0, node: node).description }

    @Test func deltasFromEveryDeviceAddUpWhateverTheOrder() {
        let changes = [
            change(stamp(1), fields: ["quantity": 6]),
            change(stamp(2, node: "a"), deltas: ["quantity": -2]),
            change(stamp(3, node: "b"), deltas: ["quantity": -1]),
        ]
        for order in [changes, changes.reversed(), [changes[1], changes[0], changes[2]]] {
            var state = SyncRecordState()
            for change in order { _ = state.apply(change) }
            #expect(state.fields["quantity"] == .integer(3))
        }
    }

    @Test func aSetWinsOverEarlierDeltasAndKeepsLaterOnesWhateverTheOrder() {
        let changes = [
            change(stamp(1), fields: ["quantity": 10]),
            change(stamp(2, node: "b"), deltas: ["quantity": -3]),
            change(stamp(3, node: "a"), fields: ["quantity": 2]),
            change(stamp(4, node: "a"), deltas: ["quantity": -1]),
        ]
        for order in [changes, changes.reversed(), [changes[3], changes[1], changes[0], changes[2]]] {
            var state = SyncRecordState()
            for change in order { _ = state.apply(change) }
            #expect(state.fields["quantity"] == .integer(1))
        }
    }

    @Test func aReplayedDeltaCountsOnceEvenWithoutItsChangeID() {
        // NB: applied change ids are purged after a while; the merge itself must stay idempotent.
        var state = SyncRecordState()
        _ = state.apply(change(stamp(1), fields: ["quantity": 6]))
        _ = state.apply(change(stamp(2), deltas: ["quantity": -2]))
        let changed = state.apply(change(stamp(2), deltas: ["quantity": -2]))
        #expect(!changed)
        #expect(state.fields["quantity"] == .integer(4))
    }

    @Test func aDeltaAfterADeleteBringsTheRecordBack() {
        var state = SyncRecordState()
        _ = state.apply(change(stamp(1), fields: ["quantity": 6]))
        _ = state.apply(change(stamp(2), deleted: true))
        #expect(state.isDeleted)
        _ = state.apply(change(stamp(3), deltas: ["quantity": -1]))
        #expect(!state.isDeleted)
        #expect(state.newestStamp?.description == stamp(3))
    }

    @Test func aFinalDeletionBeatsALaterStampedEditThatArrivedFirstAndOnlyAMakingAgainBringsItBack() {
        func change(_ millis: Int64, fields: [String: SyncValue] = [:], deleted: Bool = false, creates: Bool = false) -> ValidatedChange {
            var change = ValidatedChange(collection: "spending_transactions", recordID: "t",
                                         stamp: HLCStamp(millis: millis, counter: HLCStamp.maxCounter, node: "n"),
                                         fields: fields, deltas: [:], deleted: deleted)
            change.creates = creates
            return change
        }
        // Given a transaction, an edit stamped 2 that reached the server first, then a delete stamped 1
        var state = SyncRecordState()
        _ = state.apply(change(0, fields: ["note": "refund", "amountMinor": 5000], creates: true))
        _ = state.apply(change(2, fields: ["note": "tax refund"]))
        let delete = change(1, deleted: true)
        _ = state.apply(delete)
        #expect(!state.isDeleted, "last writer wins alone would keep it")
        // When the deletion is made final, it is deleted, its tombstone just past the edit (a full counter moves the millisecond)
        let made = state.makeFinal(delete)
        #expect(made && state.isDeleted)
        #expect(state.tombstone == HLCStamp(millis: 3, counter: 0, node: "n"))
        let twice = state.makeFinal(delete)
        #expect(!twice, "a second time changes nothing")
        // And a delete stamped before the record was made again deletes nothing of the new one
        var again = state
        _ = again.apply(change(5, fields: ["note": "kept", "amountMinor": 5000], creates: true))
        #expect(!again.isDeleted)
        let older = again.makeFinal(change(4, deleted: true))
        #expect(!older)
        #expect(!again.isDeleted && again.fields["note"] == "kept")
    }

    @Test func theStoredColumnsReadBackTheSameState() throws {
        var state = SyncRecordState()
        _ = state.apply(change(stamp(1), fields: [
            "name": "Tea \"green\"\n\\ ☕️\u{01}", "quantity": 2.5, "boughtAt": 1_764_000_000_000, "expiresOn": nil, "flag": true,
            "tiny": 1e-7, "huge": 1e300,
        ]))
        _ = state.apply(change(stamp(2, node: "x"), deltas: ["quantity": -0.1]))
        _ = state.apply(change(stamp(3, node: "y"), deleted: true))
        let columns = try state.columns()
        #expect(try SyncRecordState(columns) == state)
        let viaFoundation = try JSONDecoder().decode([String: SyncValue].self, from: Data(columns.fields.utf8))
        #expect(viaFoundation == state.fields)
    }
}
