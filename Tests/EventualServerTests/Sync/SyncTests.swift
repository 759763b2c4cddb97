import EventualAPI
import Foundation
import Testing
@testable import EventualServer

@Suite("Sync: push, merge, pull", .timeLimit(.minutes(2)))
struct SyncTests {
    @Test(arguments: Backend.available)
    func pushedRecordIsPulledInItsMergedState(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given
            let account = try await api.signUp()
            let stamp = Stamps.at(-1000)
            let fields = pantryItem(["quantity": 2.5, "expiresOn": "2024-02-29", "description": nil, "touchedAt": 42])
            // When
            let results = try await api.pushed([SyncChangeJSON(recordId: "item-1", hlc: stamp, fields: fields)], as: account)
            // Then
            #expect(results.map(\.status) == ["applied"])
            #expect(results.first?.message == nil)
            let page = try await api.pulled(as: account)
            #expect(page.changes == [SyncRecordJSON(collection: "pantry_items", recordId: "item-1", fields: fields,
                                                    deleted: false, hlc: stamp)])
            #expect(page.hasMore == false)
            #expect(page.cursor != "0")
            // And nothing is new after that cursor
            let next = try await api.pulled(since: page.cursor, as: account)
            #expect(next.changes.isEmpty)
            #expect(next.cursor == page.cursor)
        }
    }

    @Test(arguments: Backend.available)
    func replayedChangeIsAcknowledgedNotApplied(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given a record written by a first change, then a newer one
            let account = try await api.signUp()
            let first = SyncChangeJSON(recordId: "item", hlc: Stamps.at(-3000), fields: pantryItem(["name": "First"]))
            _ = try await api.pushed([first], as: account)
            _ = try await api.pushed([SyncChangeJSON(recordId: "item", hlc: Stamps.at(-2000), fields: ["name": "Second"])], as: account)
            let cursor = try await api.pulled(as: account).cursor
            // When the first change's id comes again, even carrying a newer stamp and value
            var replay = first
            replay.hlc = Stamps.at(-1000)
            replay.fields = ["name": "Replayed"]
            let results = try await api.pushed([replay], as: account)
            // Then it is a duplicate and nothing changed: no new seq, the value stays
            #expect(results.map(\.status) == ["duplicate"])
            #expect(try await api.pulled(since: cursor, as: account).changes.isEmpty)
            #expect(try await api.pulledRecords(as: account)["item"]?.fields["name"] == "Second")
        }
    }

    @Test(arguments: Backend.available)
    func changeRepeatedInOneBatchIsADuplicateTheSecondTime(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let change = SyncChangeJSON(recordId: "item", hlc: Stamps.at(-1000), fields: pantryItem())
            var sameIDNewerValue = change
            sameIDNewerValue.hlc = Stamps.at(-500)
            sameIDNewerValue.fields = ["name": "Other"]
            let results = try await api.pushed([change, sameIDNewerValue], as: account)
            #expect(results.map(\.status) == ["applied", "duplicate"])
            #expect(try await api.pulledRecords(as: account)["item"]?.fields["name"] == "Oat milk")
        }
    }

    @Test(arguments: Backend.available)
    func olderStampArrivingLaterLosesFieldByField(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given a record whose name was set at t2
            let account = try await api.signUp()
            // NB: all stamps taken now, so that a slow run cannot make a later "older" stamp newer.
            let t0 = Stamps.at(-6000), t1 = Stamps.at(-5000), t2 = Stamps.at(-4000)
            _ = try await api.pushed([SyncChangeJSON(recordId: "item", hlc: t2, fields: pantryItem(["name": "Newer"]))], as: account)
            let cursor = try await api.pulled(as: account).cursor
            // When a change stamped t1 arrives later, setting the name and a field never set
            let late = try await api.pushed([SyncChangeJSON(recordId: "item", hlc: t1, fields: ["name": "Older", "unit": "l"])], as: account)
            // Then it is applied, but only where it is the newest writer
            #expect(late.map(\.status) == ["applied"])
            let record = try #require(try await api.pulled(since: cursor, as: account).changes.first)
            #expect(record.fields["name"] == "Newer")
            #expect(record.fields["unit"] == "l")
            #expect(record.hlc == t2)

            // And a change that loses every comparison is applied, changes no value, and sends the
            // record out again: its device may have skipped the winning value while its own edit
            // was pending, and must pull it to converge
            let cursorAfter = try await api.pulled(as: account).cursor
            let lost = try await api.pushed([SyncChangeJSON(recordId: "item", hlc: t0, fields: ["name": "Oldest"])], as: account)
            #expect(lost.map(\.status) == ["applied"])
            let again = try await api.pulled(since: cursorAfter, as: account).changes
            #expect(again.map(\.recordId) == ["item"])
            #expect(again.first?.fields["name"] == "Newer")
        }
    }

    @Test(arguments: Backend.available)
    func concurrentEditsOfDifferentFieldsBothSurvive(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given an item both devices know
            let account = try await api.signUp()
            _ = try await api.pushed([SyncChangeJSON(recordId: "item", hlc: Stamps.at(-9000), fields: pantryItem())], as: account)
            // When each device edits another field offline; the later edit reaches the server first
            let phone = SyncChangeJSON(recordId: "item", hlc: Stamps.at(-2000, node: "phone"), fields: ["name": "Whole milk"])
            let tablet = SyncChangeJSON(recordId: "item", hlc: Stamps.at(-3000, node: "tablet"), fields: ["quantity": 3])
            _ = try await api.pushed([phone], as: account)
            _ = try await api.pushed([tablet], as: account)
            // Then both edits survive
            let record = try #require(try await api.pulledRecords(as: account)["item"])
            #expect(record.fields["name"] == "Whole milk")
            #expect(record.fields["quantity"] == 3)
            #expect(record.hlc == phone.hlc)
        }
    }

    @Test(arguments: Backend.available)
    func deleteBeatsOlderEditsAndANewerEditRevives(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given an item deleted at t3
            let account = try await api.signUp()
            let t1 = Stamps.at(-9000), t2 = Stamps.at(-8000), t3 = Stamps.at(-7000), t4 = Stamps.at(-6000)
            _ = try await api.pushed([SyncChangeJSON(recordId: "item", hlc: t1, fields: pantryItem())], as: account)
            let deletion = try await api.pushed([SyncChangeJSON(recordId: "item", hlc: t3, deleted: true)], as: account)
            #expect(deletion.map(\.status) == ["applied"])
            var record = try #require(try await api.pulledRecords(as: account)["item"])
            #expect(record.deleted)
            #expect(record.hlc == t3)
            // When an edit made before the delete arrives late
            _ = try await api.pushed([SyncChangeJSON(recordId: "item", hlc: t2, fields: ["name": "Edited before delete"])], as: account)
            // Then the record stays deleted
            record = try #require(try await api.pulledRecords(as: account)["item"])
            #expect(record.deleted)
            #expect(record.hlc == t3)
            // When an edit made after the delete arrives
            _ = try await api.pushed([SyncChangeJSON(recordId: "item", hlc: t4, fields: ["name": "Back again"])], as: account)
            // Then the record is back, with the newest values
            record = try #require(try await api.pulledRecords(as: account)["item"])
            #expect(!record.deleted)
            #expect(record.hlc == t4)
            #expect(record.fields["name"] == "Back again")
            #expect(record.fields["quantity"] == 1)
        }
    }

    @Test(arguments: Backend.available)
    func deleteOfAnUnknownRecordLeavesATombstone(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let stamp = Stamps.at(-1000)
            _ = try await api.pushed([SyncChangeJSON(recordId: "gone", hlc: stamp, deleted: true)], as: account)
            let record = try #require(try await api.pulledRecords(as: account)["gone"])
            #expect(record.deleted)
            #expect(record.fields.isEmpty)
            #expect(record.hlc == stamp)
        }
    }

    @Test(arguments: Backend.available)
    func invalidChangesAreRejectedWithTheirReasonAndTheOthersApplied(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given a batch where most changes break one rule each
            let account = try await api.signUp()
            let now = Stamps.at(-1000)
            let cases: [(change: SyncChangeJSON, mentions: [String])] = [
                (SyncChangeJSON(recordId: "good-1", hlc: now, fields: pantryItem()), []),
                (SyncChangeJSON(collection: "spaceships", recordId: "r", hlc: now, fields: ["name": "x"]), ["unknown collection", "spaceships"]),
                (SyncChangeJSON(recordId: "r", hlc: now, fields: ["colour": "red"]), ["unknown field", "colour"]),
                (SyncChangeJSON(recordId: "r", hlc: now, fields: ["quantity": "two"]), ["quantity", "must be a number", "string"]),
                (SyncChangeJSON(recordId: "r", hlc: now, fields: ["quantity": true]), ["quantity", "must be a number", "boolean"]),
                (SyncChangeJSON(recordId: "r", hlc: now, fields: ["boughtAt": 1.5]), ["boughtAt", "whole number"]),
                (SyncChangeJSON(recordId: "r", hlc: now, fields: ["name": nil]), ["name", "cannot be null"]),
                (SyncChangeJSON(recordId: "r", hlc: now, fields: ["expiresOn": "2023-02-29"]), ["expiresOn", "YYYY-MM-DD"]),
                (SyncChangeJSON(recordId: "r", hlc: now, fields: ["expiresOn": "29/02/2024"]), ["expiresOn", "YYYY-MM-DD"]),
                (SyncChangeJSON(recordId: "r", hlc: now, fields: ["name": .string(String(repeating: "é", count: 201))]), ["name", "at most 200 characters"]),
                (SyncChangeJSON(recordId: "r", hlc: "yesterday", fields: ["name": "x"]), ["hlc", "yesterday", "13-digit"]),
                (SyncChangeJSON(recordId: "r", hlc: Stamps.at(10 * 60 * 1000), fields: ["name": "x"]), ["hlc", "ahead of the server's clock"]),
                (SyncChangeJSON(recordId: "", hlc: now, fields: ["name": "x"]), ["recordId", "1 to 128"]),
                (SyncChangeJSON(recordId: String(repeating: "r", count: 129), hlc: now, fields: ["name": "x"]), ["recordId", "1 to 128"]),
                (SyncChangeJSON(recordId: "good-2", hlc: now, fields: pantryItem(["name": .string(String(repeating: "é", count: 200))])), []),
            ]
            // When it is pushed
            let results = try await api.pushed(cases.map(\.change), as: account)
            // Then each bad change is rejected with a message naming the rule, the good ones applied
            for (result, expected) in zip(results, cases) {
                if expected.mentions.isEmpty {
                    #expect(result.status == "applied", "\(result)")
                } else {
                    #expect(result.status == "rejected", "\(expected.change.fields): \(result)")
                    for word in expected.mentions {
                        #expect(result.message?.contains(word) == true, "\(word) in \(result.message ?? "nil")")
                    }
                }
            }
            let records = try await api.pulledRecords(as: account)
            #expect(Set(records.keys) == ["good-1", "good-2"])
            // And a rejected change was not recorded as applied: fixed and sent again under its id, it applies
            var fixed = cases[3].change
            fixed.fields = pantryItem(["quantity": 2])
            #expect(try await api.pushed([fixed], as: account).map(\.status) == ["applied"])
        }
    }

    @Test(arguments: Backend.available)
    func clockDriftLimitIsConfigurable(_ backend: Backend) async throws {
        try await withServer(backend, configure: { $0.maxClockDrift = .seconds(3600) }) { api in
            let account = try await api.signUp()
            let tenMinutesAhead = SyncChangeJSON(recordId: "r", hlc: Stamps.at(10 * 60 * 1000), fields: pantryItem())
            let twoHoursAhead = SyncChangeJSON(recordId: "r", hlc: Stamps.at(2 * 3600 * 1000), fields: pantryItem())
            let results = try await api.pushed([tenMinutesAhead, twoHoursAhead], as: account)
            #expect(results.map(\.status) == ["applied", "rejected"])
            #expect(results.last?.message?.contains("at most 3600 s") == true, "\(results)")
        }
    }

    @Test(arguments: Backend.available)
    func syncNeedsAnAccessToken(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let push = try await api.push([SyncChangeJSON(recordId: "r", hlc: Stamps.at(0), fields: pantryItem())], as: nil)
            let pull = try await api.pull(as: nil)
            for answer in [push, pull] {
                #expect(answer.status == .unauthorized)
                _ = try answer.error()
            }
        }
    }

    @Test(arguments: Backend.available)
    func usersNeverSeeEachOthersRecords(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given two users who push the same record id, even under the same change id
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            let changeID = UUID().uuidString
            let aliceResults = try await api.pushed([SyncChangeJSON(id: changeID, recordId: "shared", hlc: Stamps.at(-2000),
                                                                    fields: pantryItem(["name": "Alice's"]))], as: alice)
            let bobResults = try await api.pushed([SyncChangeJSON(id: changeID, recordId: "shared", hlc: Stamps.at(-3000),
                                                                  fields: pantryItem(["name": "Bob's"]))], as: bob)
            _ = try await api.pushed([SyncChangeJSON(recordId: "alice-only", hlc: Stamps.at(-1000), fields: pantryItem())], as: alice)
            // Then each change is applied for its own user, and each sees only their records
            #expect(aliceResults.map(\.status) == ["applied"])
            #expect(bobResults.map(\.status) == ["applied"])
            let aliceRecords = try await api.pulledRecords(as: alice)
            let bobRecords = try await api.pulledRecords(as: bob)
            #expect(Set(aliceRecords.keys) == ["shared", "alice-only"])
            #expect(Set(bobRecords.keys) == ["shared"])
            #expect(aliceRecords["shared"]?.fields["name"] == "Alice's")
            #expect(bobRecords["shared"]?.fields["name"] == "Bob's")
        }
    }

    @Test(arguments: Backend.available)
    func pullPagesThroughChangesWithLimitAndHasMore(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given seven records pushed one after the other
            let account = try await api.signUp()
            let ids = (1...7).map { "item-\($0)" }
            for id in ids {
                _ = try await api.pushed([SyncChangeJSON(recordId: id, hlc: Stamps.at(-1000), fields: pantryItem())], as: account)
            }
            // When pulled three at a time
            var pages: [SyncPullJSON] = []
            var cursor: String?
            for _ in 0..<4 {
                let page = try await api.pulled(since: cursor, limit: 3, as: account)
                pages.append(page)
                cursor = page.cursor
            }
            // Then they come in push order, and hasMore says when to stop
            #expect(pages.map { $0.changes.map(\.recordId) } == [Array(ids[0..<3]), Array(ids[3..<6]), [ids[6]], []])
            #expect(pages.map(\.hasMore) == [true, true, false, false])
            #expect(pages[3].cursor == pages[2].cursor)
            // And a record changed again moves to the end
            _ = try await api.pushed([SyncChangeJSON(recordId: "item-1", hlc: Stamps.at(-500), fields: ["unit": "box"])], as: account)
            let again = try await api.pulled(since: cursor, as: account)
            #expect(again.changes.map(\.recordId) == ["item-1"])
            #expect(again.changes.first?.fields["unit"] == "box")
        }
    }

    @Test(arguments: Backend.available)
    func badSinceOrLimitIsA400(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let cases: [(query: String, mentions: String)] = [
                ("since=-1", "since"), ("since=abc", "since"), ("since=1.5", "since"), ("since=", "since"),
                ("since=99999999999999999999", "since"),
                ("limit=0", "limit"), ("limit=1001", "limit"), ("limit=-3", "limit"), ("limit=ten", "limit"),
            ]
            for bad in cases {
                let answer = try await api.send(.get, "/v1/sync/pull?\(bad.query)", headers: account.bearer)
                #expect(answer.status == .badRequest, "\(bad.query): \(answer.text)")
                #expect(try answer.error().message.contains(bad.mentions), "\(bad.query): \(answer.text)")
            }
            #expect(try await api.pull(since: "0", limit: 1000, as: account).status == .ok)
            #expect(try await api.pull(limit: 1, as: account).status == .ok)
        }
    }

    @Test(arguments: Backend.available)
    func pushOfMoreThan500ChangesOrWithoutAnIdIsA400(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let stamp = Stamps.at(-1000)
            let tooMany = (0...500).map { SyncChangeJSON(recordId: "r\($0)", hlc: stamp, fields: pantryItem()) }
            let oversized = try await api.push(tooMany, as: account)
            #expect(oversized.status == .badRequest)
            #expect(try oversized.error().message.contains("500"))
            let noID = try await api.push([SyncChangeJSON(id: "", recordId: "r", hlc: stamp, fields: pantryItem())], as: account)
            #expect(noID.status == .badRequest)
            #expect(try noID.error().message.contains("id"))
            // And nothing of either was stored
            #expect(try await api.pulledRecords(as: account).isEmpty)
            // While 500 changes in one push are fine
            let results = try await api.pushed(Array(tooMany.dropLast()), as: account)
            #expect(results.allSatisfy { $0.status == "applied" })
            #expect(try await api.pulledRecords(as: account).count == 500)
        }
    }

    @Test(arguments: Backend.available)
    func malformedPushIsA400NotA500(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let stamp = Stamps.at(0)
            let bodies = [
                #"{"changes": [ {"id": "a""#,
                #"{}"#,
                #"{"changes": {}}"#,
                #"{"changes": [{"id": "a", "collection": "pantry_items", "recordId": "r", "hlc": "\#(stamp)", "deleted": false}]}"#,
                #"{"changes": [{"id": "a", "collection": "pantry_items", "recordId": "r", "hlc": "\#(stamp)", "fields": [], "deleted": false}]}"#,
                #"{"changes": [{"id": "a", "collection": "pantry_items", "recordId": "r", "hlc": "\#(stamp)", "fields": {}, "deleted": "no"}]}"#,
                #"{"changes": [{"id": 7, "collection": "pantry_items", "recordId": "r", "hlc": "\#(stamp)", "fields": {}, "deleted": false}]}"#,
            ]
            for body in bodies {
                let answer = try await api.send(.post, "/v1/sync/push", headers: account.bearer, json: body)
                #expect(answer.status == .badRequest, "\(body): \(answer.text)")
                _ = try answer.error()
            }
        }
    }

    /// The cursor must never skip a change that commits late: many pushes race while a device pulls
    /// with its cursor, and the union of what it saw must hold every record pushed.
    /// NB: the router test client calls the responder concurrently (the live one pipelines on one
    /// connection), so the pushes really overlap, on PostgreSQL on separate connections.
    /// NB: 5 minutes, not the suite's 2: 2 s alone, but under the whole suite on two cores its 200
    /// pushes to one space (serialized by the space's counter lock) once took over 2 minutes.
    @Test(.timeLimit(.minutes(5)), arguments: Backend.available)
    func pullingCursorNeverSkipsAChangeThatCommitsLate(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let pushers = 20, pushesEach = 10, recordsEach = 3
            let pushesDone = Flag()

            let puller = Task { () -> (seen: Set<String>, pulls: Int) in
                var seen: Set<String> = []
                var cursor: String?
                var pulls = 0
                while true {
                    // NB: read before the pull, so that the last pull starts after every push returned.
                    let finished = await pushesDone.isSet
                    let page = try await api.pulled(since: cursor, as: account)
                    pulls += 1
                    seen.formUnion(page.changes.map(\.recordId))
                    cursor = page.cursor
                    if finished, page.changes.isEmpty { return (seen, pulls) }
                    // NB: a short pause after an empty page, so that the puller does not spin and
                    // starve the pushers it is waiting for; it still pulls many times among them.
                    if page.changes.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
                }
            }
            let pushed = try await withThrowingTaskGroup(of: [String].self) { group in
                for pusher in 0..<pushers {
                    group.addTask {
                        var ids: [String] = []
                        for push in 0..<pushesEach {
                            let changes = (0..<recordsEach).map { index in
                                SyncChangeJSON(recordId: "p\(pusher)-\(push)-\(index)", hlc: Stamps.at(-1000, node: "n\(pusher)"),
                                               fields: pantryItem())
                            }
                            // And every push also edits one record they all share, so seqs move under the puller.
                            let shared = SyncChangeJSON(recordId: "shared", hlc: Stamps.at(0, counter: push, node: "n\(pusher)"),
                                                        fields: ["quantity": .integer(Int64(pusher * 100 + push))])
                            let results = try await api.pushed(changes + [shared], as: account)
                            #expect(results.allSatisfy { $0.status == "applied" })
                            ids += changes.map(\.recordId)
                        }
                        return ids
                    }
                }
                var all: Set<String> = []
                for try await ids in group { all.formUnion(ids) }
                return all
            }
            await pushesDone.set()
            let (seen, pulls) = try await puller.value
            #expect(pushed.count == pushers * pushesEach * recordsEach)
            let missed = pushed.subtracting(seen)
            #expect(missed.isEmpty, "the puller never saw \(missed.count) records (\(pulls) pulls)")
            #expect(seen.contains("shared"))
        }
    }

    @Test func calendarDatesAreCheckedDayByDay() {
        for valid in ["2024-02-29", "2000-02-29", "2023-12-31", "0001-01-01"] {
            #expect(PushValidation.isCalendarDate(valid), "\(valid)")
        }
        for invalid in ["2023-02-29", "1900-02-29", "2023-04-31", "2023-13-01", "2023-00-10", "2023-1-01",
                        "2023-01-01T00:00", "０２０２-01-01", "0000-01-01", ""] {
            #expect(!PushValidation.isCalendarDate(invalid), "\(invalid)")
        }
    }
}

/// A one-way signal between test tasks.
actor Flag {
    private(set) var isSet = false
    func set() { isSet = true }
}
