import EventualAPI
import Foundation
import Testing
@testable import EventualServer

/// The server's history of commits (`SyncHistory`) and records sent back with their merge state
/// (`MergeState`), across a real restore of the database: sqlite3's backup, or pg_dump and pg_restore.
@Suite("Sync: a server restored from a backup", .timeLimit(.minutes(3)))
struct SyncRestoreTests {
    @Test(arguments: Backend.available)
    func aPullNamingACommitTheRestoredServerLostIsAnsweredRewound(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            // Given alice's first item, and the head she heard of then
            let alice = try await api.signUp("alice")
            let first = try await api.pushedAnswer([item("eggs")], as: alice)
            let kept = try #require(first.heads.first { $0.space == alice.id })
            let snapshot = try await ServerSnapshot.take(of: location)
            defer { snapshot.remove() }
            // And a second item after the copy was taken, whose commit she heard of too
            let second = try await api.pushedAnswer([item("tea")], as: alice)
            let lost = try #require(second.heads.first { $0.space == alice.id })
            #expect(lost.seq == kept.seq + 1 && lost.tag != kept.tag)
            #expect(try await api.pulledPage(seen: [lost.tag], as: alice).rewound == nil)

            // When the copy is put back
            try await snapshot.restore()
            // Then a pull that names the lost commit is answered rewound, with no record
            let rewound = try await api.pulledPage(seen: [lost.tag, kept.tag], as: alice)
            #expect(rewound.rewound == [lost.tag])
            #expect(rewound.changes.isEmpty)
            // And one that names only what the copy holds is answered as ever
            let fine = try await api.pulledPage(seen: [kept.tag], as: alice)
            #expect(fine.rewound == nil && fine.changes.map(\.recordId) == ["eggs"])
            // And a new commit that takes the lost seq again has a tag of its own: the lost one stays lost
            let again = try await api.pushedAnswer([item("jam")], as: alice)
            let reused = try #require(again.heads.first { $0.space == alice.id })
            #expect(reused.seq == lost.seq && reused.tag != lost.tag)
            #expect(try await api.pulledPage(seen: [lost.tag], as: alice).rewound == [lost.tag])
        }
    }

    @Test(arguments: Backend.available)
    func aPushNamingACommitTheRestoredServerLostAppliesNothingUntilTheDeviceSentBackWhatItHolds(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            // Given alice's first item, then a copy, then a second item whose commit she heard of
            let alice = try await api.signUp("alice")
            _ = try await api.pushedAnswer([item("eggs")], as: alice)
            let snapshot = try await ServerSnapshot.take(of: location)
            defer { snapshot.remove() }
            let second = try await api.pushedAnswer([item("tea")], as: alice)
            let lost = try #require(second.heads.first { $0.space == alice.id })

            // When the copy is put back, and her device pushes its deletion of tea and a new item, naming the lost commit
            try await snapshot.restore()
            let body = String(decoding: try JSONEncoder().encode(PushNamingSeen(changes: [item("tea", deleted: true), item("jam")],
                                                                                seen: [lost.tag])), as: UTF8.self)
            let answer = try await api.send(.post, "/v1/sync/push", headers: alice.bearer, json: body)
            #expect(answer.status == .ok)
            let held = try answer.decode(HistoryPushAnswerJSON.self)

            // Then neither is applied: each is answered rejected, to be sent again after what the device holds
            #expect(held.rewound == [lost.tag])
            #expect(held.results.map(\.status) == ["rejected", "rejected"])
            #expect(held.results.allSatisfy { $0.message?.contains("restored from an earlier copy") == true })
            #expect(held.heads.isEmpty)
            let records = try await api.pulledRecords(as: alice)
            #expect(records.keys.sorted() == ["eggs"])
            // And a deletion sent after the record it deletes came back leaves it deleted, refused nowhere
            let sentBack = try await api.pushedAnswer([item("tea"), item("tea", deleted: true), item("jam")], as: alice)
            #expect(sentBack.results.map(\.status) == ["applied", "applied", "applied"])
            let after = try await api.pulledRecords(as: alice)
            #expect(after["tea"]?.deleted == true && after["jam"]?.deleted == false)
        }
    }

    @Test(arguments: Backend.available)
    func aRecordSentBackWithItsStateEndsAsMergedBeforeTheRestoreAndCountsOnce(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            // Given a record set at 5, before the copy is taken
            let alice = try await api.signUp("alice")
            let start = UnixMillis.now() - 60_000
            func stamp(_ offset: Int64, _ node: String) -> String { HLCStamp(millis: start + offset, counter: 0, node: node).description }
            _ = try await api.pushedAnswer([SyncChangeJSON(recordId: "milk", hlc: stamp(0, "a"), fields: pantryItem(["quantity": 5]))], as: alice)
            let snapshot = try await ServerSnapshot.take(of: location)
            defer { snapshot.remove() }
            // And then one taken from it, and it renamed, on two devices
            _ = try await api.pushedAnswer([SyncChangeJSON(recordId: "milk", hlc: stamp(1000, "a"), deltas: ["quantity": -1])], as: alice)
            _ = try await api.pushedAnswer([SyncChangeJSON(recordId: "milk", hlc: stamp(2000, "b"), fields: ["name": "Whole milk"])], as: alice)
            let held = try #require(try await api.pulledPage(seen: [], as: alice).changes.first { $0.recordId == "milk" })
            #expect(held.fields["quantity"] == 4 && held.state != nil)

            // When the copy is put back, and another device takes two after the restore
            try await snapshot.restore()
            _ = try await api.pushedAnswer([SyncChangeJSON(recordId: "milk", hlc: stamp(3000, "c"), deltas: ["quantity": -2])], as: alice)
            // And two devices send the record back as they held it
            for _ in 0..<2 {
                let results = try await api.pushedAnswer([RestoredChange(held)], as: alice).results
                #expect(results.map(\.status) == ["applied"])
            }
            // Then it holds every change once: 5 - 1 - 2, and the rename
            let merged = try #require(try await api.pulledRecords(as: alice)["milk"])
            #expect(merged.fields["quantity"] == 2)
            #expect(merged.fields["name"] == "Whole milk")
            #expect(!merged.deleted)
        }
    }

    @Test(arguments: Backend.available)
    func aDeletionSentBackStaysADeletionAndIsNeverRefused(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let alice = try await api.signUp("alice")
            let start = UnixMillis.now() - 60_000
            func stamp(_ offset: Int64) -> String { HLCStamp(millis: start + offset, counter: 0, node: "a").description }
            _ = try await api.pushedAnswer([SyncChangeJSON(recordId: "bread", hlc: stamp(0), fields: pantryItem())], as: alice)
            let snapshot = try await ServerSnapshot.take(of: location)
            defer { snapshot.remove() }
            // Given the record deleted after the copy, as a device last pulled it
            _ = try await api.pushedAnswer([SyncChangeJSON(recordId: "bread", hlc: stamp(1000), deleted: true)], as: alice)
            let gone = try #require(try await api.pulledRecords(as: alice)["bread"])
            let page = try await api.pulledPage(seen: [], since: "s1", as: alice)
            let held = try #require(page.changes.first { $0.recordId == "bread" })
            #expect(gone.deleted && held.deleted)
            // When the copy is put back (the record alive again) and the device sends it back
            try await snapshot.restore()
            let results = try await api.pushedAnswer([RestoredChange(held)], as: alice).results
            // Then it is deleted again, and the change applied, not refused
            #expect(results.map(\.status) == ["applied"])
            #expect(try await api.pulledRecords(as: alice)["bread"]?.deleted == true)
        }
    }

    @Test(arguments: Backend.available)
    func aStateThatIsNotOneOrNamesUnknownFieldsIsRejectedAloneNeverWhole(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let alice = try await api.signUp("alice")
            let stamp = Stamps.at(-1000)
            let bad = [
                RestoredChange(recordId: "x1", hlc: stamp, fields: pantryItem(), state: "not json"),
                RestoredChange(recordId: "x2", hlc: stamp, fields: pantryItem(), state: #"{"s":{"nope":"\#(stamp)"},"d":{},"t":null}"#),
                RestoredChange(recordId: "x3", hlc: stamp, fields: pantryItem(), state: #"{"s":{"name":"yesterday"},"d":{},"t":null}"#),
                RestoredChange(recordId: "x4", hlc: stamp, fields: pantryItem(),
                               state: MergeState(stamps: ["name": HLCStamp(millis: UnixMillis.now() + 86_400_000, counter: 0, node: "a")]).text),
                RestoredChange(recordId: "ok", hlc: stamp, fields: ["name": "Kept"],
                               state: MergeState(stamps: ["name": HLCStamp(parsing: stamp)!]).text),
            ]
            let results = try await api.pushedAnswer(bad, as: alice).results
            #expect(results.map(\.status) == ["rejected", "rejected", "rejected", "rejected", "applied"])
            #expect(try await api.pulledRecords(as: alice)["ok"]?.fields["name"] == "Kept")
        }
    }

    // MARK: - Helpers

    private func item(_ id: String) -> SyncChangeJSON {
        SyncChangeJSON(recordId: id, hlc: Stamps.at(-1000), fields: pantryItem())
    }

    /// The item made, or deleted a moment later.
    private func item(_ id: String, deleted: Bool) -> SyncChangeJSON {
        guard deleted else { return item(id) }
        var change = SyncChangeJSON(recordId: id, hlc: Stamps.at(-500), fields: [:])
        change.deleted = true
        return change
    }
}

/// A pull's page with what the history adds.
struct HistoryPageJSON: Decodable {
    struct Record: Decodable {
        let collection: String
        let recordId: String
        let fields: [String: SyncValue]
        let deleted: Bool
        let hlc: String
        let state: String?
    }

    let changes: [Record]
    let cursor: String
    let heads: [SyncHead]?
    let rewound: [String]?
}

/// A push that names the commits its device heard of.
struct PushNamingSeen: Encodable {
    let changes: [SyncChangeJSON]
    let seen: [String]
}

/// A push's answer, with the commits its device heard of that the server lost.
struct HistoryPushAnswerJSON: Decodable {
    let results: [SyncResultJSON]
    let heads: [SyncHead]
    let rewound: [String]?
}

/// A push's answer with the heads of the spaces it wrote to.
struct HistoryPushJSON: Decodable {
    let results: [SyncResultJSON]
    let heads: [SyncHead]
}

/// A record sent back after a restore, as a device holds it.
struct RestoredChange: Encodable, Sendable {
    var id = UUID().uuidString.lowercased()
    var collection = "pantry_items"
    var recordId: String
    var hlc: String
    var fields: [String: SyncValue]
    var deleted = false
    var restores = true
    var state: String

    init(recordId: String, hlc: String, fields: [String: SyncValue], state: String) {
        self.recordId = recordId
        self.hlc = hlc
        self.fields = fields
        self.state = state
    }

    init(_ record: HistoryPageJSON.Record) {
        self.init(recordId: record.recordId, hlc: record.hlc, fields: record.fields, state: record.state ?? "")
    }
}

extension API {
    func pushedAnswer(_ changes: [some Encodable & Sendable], as account: Account) async throws -> HistoryPushJSON {
        let body = String(decoding: try JSONEncoder().encode(["changes": changes]), as: UTF8.self)
        let answer = try await send(.post, "/v1/sync/push", headers: account.bearer, json: body)
        try #require(answer.status == .ok, "push: \(answer.text)")
        return try answer.decode(HistoryPushJSON.self)
    }

    func pulledPage(seen: [String], since: String? = nil, as account: Account) async throws -> HistoryPageJSON {
        let query = [since.map { "since=\($0)" }, seen.isEmpty ? nil : "seen=" + SyncHistory.seenValue(seen)].compactMap { $0 }
        let answer = try await send(.get, "/v1/sync/pull" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")), headers: account.bearer)
        try #require(answer.status == .ok, "pull: \(answer.text)")
        return try answer.decode(HistoryPageJSON.self)
    }
}
