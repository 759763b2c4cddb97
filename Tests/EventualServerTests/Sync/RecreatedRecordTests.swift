import EventualAPI
import Foundation
import Testing
@testable import EventualServer

/// A record deleted and made again with the same id (SpendiQ's budgets have fixed ids) starts
/// clean: nothing set before the deletion comes back, whatever order the changes arrive in.
@Suite("A record made again after its deletion")
struct RecreatedRecordTests {
    private func change(_ millis: Int64, node: String = "a", fields: [String: SyncValue] = [:], deltas: [String: Double] = [:],
                        deleted: Bool = false, creates: Bool = false) -> ValidatedChange {
        var change = ValidatedChange(collection: "pantry_items", recordID: "r", stamp: HLCStamp(millis: millis, counter: 0, node: node),
                                     fields: fields, deltas: deltas, deleted: deleted)
        change.creates = creates
        return change
    }

    /// Every order of `changes` (all of them, for up to five).
    private func orders(_ changes: [ValidatedChange]) -> [[ValidatedChange]] {
        guard changes.count > 1 else { return [changes] }
        return changes.indices.flatMap { index in
            var rest = changes
            let first = rest.remove(at: index)
            return orders(rest).map { [first] + $0 }
        }
    }

    @Test func aFieldTheNewRecordLeavesEmptyIsEmptyInEveryOrder() {
        let changes = [
            change(1, fields: ["name": "Old budget", "category": "food", "quantity": 5], creates: true),
            change(2, node: "b", fields: ["place": "kitchen"]),
            change(3, deleted: true),
            change(4, fields: ["name": "New budget", "quantity": 1], creates: true),
        ]
        for order in orders(changes) {
            var state = SyncRecordState()
            for change in order { _ = state.apply(change) }
            #expect(!state.isDeleted)
            #expect(state.fields["name"] == "New budget" && state.fields["quantity"] == 1)
            #expect(state.fields["category"] == .null && state.fields["place"] == .null, "\(order.map(\.stamp.millis))")
        }
    }

    @Test func anEditOlderThanTheDeletionThatArrivesLastIsClearedToo() {
        var state = SyncRecordState()
        for change in [change(1, fields: ["name": "A"], creates: true), change(3, deleted: true),
                       change(4, fields: ["name": "B"], creates: true), change(2, node: "b", fields: ["category": "late"])] {
            _ = state.apply(change)
        }
        #expect(state.fields["category"] == .null && state.fields["name"] == "B")
    }

    @Test func aCounterCountsOnlyWhatWasAddedAfterTheDeletion() {
        let changes = [
            change(1, fields: ["quantity": 5], creates: true),
            change(2, node: "b", deltas: ["quantity": -1]),
            change(3, deleted: true),
            change(4, fields: ["name": "Again"], creates: true),
            change(5, node: "b", deltas: ["quantity": 2]),
        ]
        for order in orders(changes) {
            var state = SyncRecordState()
            for change in order { _ = state.apply(change) }
            #expect(state.fields["quantity"] == 2, "\(order.map(\.stamp.millis))")
        }
    }
}
