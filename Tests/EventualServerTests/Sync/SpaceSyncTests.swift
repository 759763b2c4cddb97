import EventualAPI
import Foundation
import Testing
@testable import EventualServer

@Suite("Sync: records in shared spaces, membership checked on push, per-space cursors", .timeLimit(.minutes(3)))
struct SpaceSyncTests {
    @Test(arguments: Backend.available)
    func aSharedSpacesRecordsReachEveryMemberWithWhoChangedThem(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given alice's Home with bob as an editor
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            let home = try await api.createdSpace("Home", as: alice)
            try await api.join(bob, to: home.id, by: alice)
            // When alice puts an item in Home and one in her own space
            let stamp = Stamps.at(-60_000)
            _ = try await api.pushed([SyncChangeJSON(recordId: "yoghurt", hlc: stamp, fields: pantryItem(["quantity": 3]))], to: home.id, as: alice)
            _ = try await api.pushed([SyncChangeJSON(recordId: "diary", hlc: stamp, fields: pantryItem())], to: nil, as: alice)
            // Then bob pulls Home's item, named by space and by who changed it, and nothing of alice's own
            let bobs = try await api.pulledAll(as: bob)
            #expect(Array(bobs.records.keys) == ["\(home.id)/yoghurt"])
            #expect(bobs.records["\(home.id)/yoghurt"].map { [$0.space, $0.changedBy] } == [home.id, alice.username])
            #expect(bobs.last.spaces.map { [$0.id, $0.name, $0.kind, $0.role] } == [[bob.id, "Personal", "personal", "owner"],
                                                                                [home.id, "Home", "shared", "editor"]])
            #expect(bobs.last.removed.isEmpty)
            // And alice pulls both, each in its space
            let alices = try await api.pulledAll(as: alice)
            #expect(Set(alices.records.keys) == ["\(alice.id)/diary", "\(home.id)/yoghurt"])
            #expect(alices.records["\(alice.id)/diary"]?.changedBy == alice.username)

            // When both take one of the three, each from a device that had not seen the other's
            // (alice's stamped well before bob's and both after the yoghurt was put in: each stamp is read from the
            // clock when made, and a busy machine may take seconds between them)
            _ = try await api.pushed([SyncChangeJSON(recordId: "yoghurt", hlc: Stamps.at(-2000, node: "bob"), deltas: ["quantity": -1])],
                                     to: home.id, as: bob)
            _ = try await api.pushed([SyncChangeJSON(recordId: "yoghurt", hlc: Stamps.at(-30_000, node: "alice"), deltas: ["quantity": -1])],
                                     to: home.id, as: alice)
            // Then both count: one is left, for both of them; the newest change is bob's, though alice's arrived last
            for person in [alice, bob] {
                let record = try #require(try await api.pulledAll(as: person).records["\(home.id)/yoghurt"])
                #expect(record.fields["quantity"] == 1, "\(person.username)")
                #expect(record.changedBy == bob.username)
            }
        }
    }

    @Test(arguments: Backend.available)
    func theAuthorShownIsWhoeverMadeTheNewestAppliedChangeNotWhoeverPushedLast(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given alice's Home with dan as an editor, and a loaf dan made
            let alice = try await api.signUp("alice"), dan = try await api.signUp("dan")
            let home = try await api.createdSpace("Home", as: alice)
            try await api.join(dan, to: home.id, by: alice)
            let (made, dansRename, alicesRename) = (Stamps.at(-9000, node: "dan"), Stamps.at(-5000, node: "dan"), Stamps.at(-3000, node: "alice"))
            _ = try await api.pushed([SyncChangeJSON(recordId: "bread", hlc: made, fields: pantryItem(["name": "Bread"]))], to: home.id, as: dan)
            // When alice renames it, and dan's earlier rename, made offline, arrives after hers
            _ = try await api.pushed([SyncChangeJSON(recordId: "bread", hlc: alicesRename, fields: ["name": "Sourdough"])], to: home.id, as: alice)
            let late = try await api.pushed([SyncChangeJSON(recordId: "bread", hlc: dansRename, fields: ["name": "Loaf"])], to: home.id, as: dan)
            #expect(late.map(\.status) == ["applied"])
            // Then every member sees alice's name, by alice
            for person in [alice, dan] {
                let record = try #require(try await api.pulledAll(as: person).records["\(home.id)/bread"])
                #expect(record.fields["name"] == "Sourdough")
                #expect(record.changedBy == alice.username, "\(person.username) sees \(record.changedBy ?? "nobody")")
            }
            // And when dan then changes something newer, he is the author
            _ = try await api.pushed([SyncChangeJSON(recordId: "bread", hlc: Stamps.at(-1000, node: "dan"), fields: ["quantity": 2])],
                                     to: home.id, as: dan)
            #expect(try await api.pulledAll(as: alice).records["\(home.id)/bread"]?.changedBy == dan.username)
        }
    }

    @Test(arguments: Backend.available)
    func aViewersChangeIsRejectedWithItsReasonAndTheRestOfTheBatchApplies(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let alice = try await api.signUp("alice"), carol = try await api.signUp("carol")
            let home = try await api.createdSpace("Home", as: alice)
            try await api.join(carol, to: home.id, role: "viewer", by: alice)
            let stamp = Stamps.at(-1000)
            // When carol pushes one change to Home and one to her own space, in one batch
            let body = """
                {"changes": [
                  {"id": "c1", "collection": "pantry_items", "recordId": "milk", "hlc": "\(stamp)", "fields": {"name": "Milk", "quantity": 1, "boughtAt": 1, "status": "inPantry"}, "deleted": false, "space": \(jsonString(home.id))},
                  {"id": "c2", "collection": "pantry_items", "recordId": "mine", "hlc": "\(stamp)", "fields": {"name": "Mine", "quantity": 1, "boughtAt": 1, "status": "inPantry"}, "deleted": false}
                ]}
                """
            let answer = try await api.send(.post, "/v1/sync/push", headers: carol.bearer, json: body)
            // Then the first is rejected naming the space and her role, the second applied
            #expect(answer.status == .ok, "\(answer.text)")
            struct Results: Decodable { let results: [SyncResultJSON] }
            let results = try answer.decode(Results.self).results
            #expect(results.map(\.status) == ["rejected", "applied"])
            #expect(results.first?.message == "You are a viewer of Home: only its owner and editors change it")
            #expect(try await api.pulledAll(as: alice).records.keys.contains("\(home.id)/milk") == false)
            #expect(Set(try await api.pulledAll(as: carol).records.keys) == ["\(carol.id)/mine"])
            // And once she is an editor, the same change (its id was never applied) applies
            #expect(try await api.setRole("editor", of: carol.username, in: home.id, as: alice).status == .ok)
            let retried = try await api.send(.post, "/v1/sync/push", headers: carol.bearer, json: body)
            #expect(try retried.decode(Results.self).results.map(\.status) == ["applied", "duplicate"])
        }
    }

    @Test(arguments: Backend.available)
    func aNonMemberCannotReadOrWriteASpaceByGuessingItsId(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let alice = try await api.signUp("alice"), mallory = try await api.signUp("mallory")
            let home = try await api.createdSpace("Home", as: alice)
            _ = try await api.pushed([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-2000), fields: pantryItem())], to: home.id, as: alice)
            // When mallory writes to Home's id, to an id no space has, and to alice's personal space
            let results = try await api.pushed([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-1000), fields: ["quantity": 99])],
                                               to: home.id, as: mallory)
                + (try await api.pushed([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-1000), fields: pantryItem())],
                                        to: "no-such-space", as: mallory))
                + (try await api.pushed([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-1000), fields: pantryItem())],
                                        to: alice.id, as: mallory))
            // Then each is rejected in the same words, naming no space
            #expect(results.map(\.message) == ["You are not a member of space \(home.id)", "You are not a member of space no-such-space",
                                               "You are not a member of space \(alice.id)"])
            // And nothing of Home reaches her, nor changed
            let pulled = try await api.pulledAll(as: mallory)
            #expect(pulled.records.isEmpty)
            #expect(pulled.last.spaces.map(\.id) == [mallory.id])
            #expect(try await api.pulledAll(as: alice).records["\(home.id)/milk"]?.fields["quantity"] == 1)
            // And a space id that is not text the push takes is the whole push's 400
            let bad = try await api.push([SyncChangeJSON(recordId: "x", hlc: Stamps.at(-1000), fields: pantryItem())],
                                         to: String(repeating: "s", count: 129), as: mallory)
            #expect(bad.status == .badRequest)
            #expect(try bad.error().message.contains("space"))
        }
    }

    @Test(arguments: Backend.available)
    func aRemovedMembersNextPullNamesTheSpaceAndTheirChangesToItAreRejected(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given bob in alice's Home, with his cursor past its item, and an item of his own
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            let home = try await api.createdSpace("Home", as: alice)
            try await api.join(bob, to: home.id, by: alice)
            _ = try await api.pushed([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-3000), fields: pantryItem())], to: home.id, as: alice)
            _ = try await api.pushed([SyncChangeJSON(recordId: "own", hlc: Stamps.at(-3000), fields: pantryItem())], to: nil, as: bob)
            let before = try await api.pulledAll(as: bob)
            #expect(before.records.count == 2)
            // When alice removes him
            #expect(try await api.removeMember(bob.username, from: home.id, as: alice).status == .noContent)
            // Then his next pull names Home as removed, with none of its records, and his own space stays
            let after = try await api.spacePull(since: before.last.cursor, as: bob)
            #expect(after.removed == [SpaceRefJSON(id: home.id, name: "Home")])
            #expect(after.changes.isEmpty)
            #expect(after.spaces.map(\.id) == [bob.id])
            // And the cursor after it no longer holds Home: the next pull does not name it again
            #expect(try await api.spacePull(since: after.cursor, as: bob).removed.isEmpty)
            // And his change to it still waiting is rejected with the reason
            let late = try await api.pushed([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-1000), fields: ["quantity": 5])],
                                            to: home.id, as: bob)
            #expect(late.map(\.message) == ["You are no longer a member of Home"])
            // And when he is invited back, he gets the whole space again from the cursor that dropped it
            try await api.join(bob, to: home.id, by: alice)
            let back = try await api.pulledAll(since: after.cursor, as: bob)
            #expect(Array(back.records.keys) == ["\(home.id)/milk"])
        }
    }

    @Test(arguments: Backend.available)
    func aPullFromNothingNamesEverySpaceThePersonLeft(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given bob, in alice's Home, pushes an item to it from a device that has not pulled yet
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            let home = try await api.createdSpace("Home", as: alice)
            try await api.join(bob, to: home.id, by: alice)
            _ = try await api.pushed([SyncChangeJSON(recordId: "tea", hlc: Stamps.at(-3000), fields: pantryItem())], to: home.id, as: bob)
            // When alice removes him before that device's first pull
            #expect(try await api.removeMember(bob.username, from: home.id, as: alice).status == .noContent)
            // Then a pull from nothing (no cursor, or one holding no space) names Home as removed: the device drops the tea
            for since in [nil, "s1"] as [String?] {
                let first = try await api.spacePull(since: since, as: bob)
                #expect(first.removed == [SpaceRefJSON(id: home.id, name: "Home")], "since \(since ?? "nothing")")
                #expect(first.changes.isEmpty)
            }
            // And once he is back in Home, it is not named
            try await api.join(bob, to: home.id, by: alice)
            #expect(try await api.spacePull(as: bob).removed.isEmpty)
        }
    }

    @Test(arguments: Backend.available)
    func aNewMembershipSendsTheWholeSpaceThenOnlyWhatChanged(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given bob, synced, and alice's Home with five items
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            _ = try await api.pushed([SyncChangeJSON(recordId: "own", hlc: Stamps.at(-9000), fields: pantryItem())], to: nil, as: bob)
            let synced = try await api.pulledAll(as: bob)
            let home = try await api.createdSpace("Home", as: alice)
            let items = (1...5).map { "item-\($0)" }
            _ = try await api.pushed(items.map { SyncChangeJSON(recordId: $0, hlc: Stamps.at(-8000), fields: pantryItem()) }, to: home.id, as: alice)
            // When he joins and pulls from his cursor, two at a time
            try await api.join(bob, to: home.id, by: alice)
            let joined = try await api.pulledAll(since: synced.last.cursor, limit: 2, as: bob)
            // Then he gets all of Home once, and nothing of his own again
            #expect(Set(joined.records.keys) == Set(items.map { "\(home.id)/\($0)" }))
            #expect(joined.count == 5)
            // And after one change, only that one
            _ = try await api.pushed([SyncChangeJSON(recordId: "item-3", hlc: Stamps.at(-1000), fields: ["unit": "pot"])], to: home.id, as: alice)
            let next = try await api.pulledAll(since: joined.last.cursor, as: bob)
            #expect(Array(next.records.keys) == ["\(home.id)/item-3"])
            #expect(next.count == 1)
        }
    }

    @Test(arguments: Backend.available)
    func aPageFillsFromEverySpaceAndHasMoreSaysWhenAnyHasMore(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let alice = try await api.signUp("alice")
            let first = try await api.createdSpace("First", as: alice), second = try await api.createdSpace("Second", as: alice)
            let stamp = Stamps.at(-1000)
            _ = try await api.pushed((1...3).map { SyncChangeJSON(recordId: "p\($0)", hlc: stamp, fields: pantryItem()) }, to: nil, as: alice)
            _ = try await api.pushed((1...2).map { SyncChangeJSON(recordId: "a\($0)", hlc: stamp, fields: pantryItem()) }, to: first.id, as: alice)
            _ = try await api.pushed((1...2).map { SyncChangeJSON(recordId: "b\($0)", hlc: stamp, fields: pantryItem()) }, to: second.id, as: alice)
            var pages: [SpacePullJSON] = []
            var cursor: String?
            repeat {
                let page = try await api.spacePull(since: cursor, limit: 3, as: alice)
                pages.append(page)
                cursor = page.cursor
            } while pages.last!.hasMore && pages.count < 10
            // Seven records in three pages: the personal space first, then the others; none twice
            #expect(pages.map(\.changes.count) == [3, 3, 1])
            #expect(pages.map(\.hasMore) == [true, true, false])
            let seen = pages.flatMap(\.changes).map { "\($0.space)/\($0.recordId)" }
            #expect(seen.count == 7)
            #expect(Set(seen).count == 7)
            #expect(pages[0].changes.allSatisfy { $0.space == alice.id })
            // And the cursor of an empty answer is the one sent
            let empty = try await api.spacePull(since: cursor, as: alice)
            #expect(empty.changes.isEmpty)
            #expect(empty.cursor == cursor)
        }
    }

    @Test(arguments: Backend.available)
    func aCursorOfDigitsIsAPositionInThePersonalSpaceAndAMalformedTokenIsA400(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let alice = try await api.signUp("alice")
            for id in ["r1", "r2", "r3"] {
                _ = try await api.pushed([SyncChangeJSON(recordId: id, hlc: Stamps.at(-1000), fields: pantryItem())], to: nil, as: alice)
            }
            // A device that pulled two records under the old form sends "2": it gets the third
            let legacy = try await api.spacePull(since: "2", as: alice)
            #expect(legacy.changes.map(\.recordId) == ["r3"])
            #expect(legacy.cursor.hasPrefix("s1."))
            #expect(try await api.spacePull(since: legacy.cursor, as: alice).changes.isEmpty)
            // And a token no pull sent is refused
            let key = String(legacy.cursor.dropFirst(3).prefix(11))
            for bad in ["s2.\(key)3", "s1.\(key)", "s1.\(key)x", "s1.short5", "s1.\(key)1.\(key)2", "s1..", "x" + legacy.cursor,
                        "s1.\(key)1234567890123456789"] {
                let answer = try await api.pull(since: bad, as: alice)
                #expect(answer.status == .badRequest, "\(bad): \(answer.text)")
                #expect(try answer.error().message.contains("since"), "\(answer.text)")
            }
            // While a token holding a space no longer known is read without it
            #expect(try await api.pull(since: "s1.AAAAAAAAAAA7", as: alice).status == .ok)
        }
    }

    @Test(arguments: Backend.available)
    func aSpacesRecordsCountAgainstItsOwnersQuota(_ backend: Backend) async throws {
        try await withServer(backend, configure: { $0.quotas.syncRecordsPerUser = 4 }) { api in
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            let home = try await api.createdSpace("Home", as: alice)
            try await api.join(bob, to: home.id, by: alice)
            let stamp = Stamps.at(-1000)
            // alice stores three in her own space; bob may add one to Home, not two
            _ = try await api.pushed((1...3).map { SyncChangeJSON(recordId: "a\($0)", hlc: stamp, fields: pantryItem()) }, to: nil, as: alice)
            let two = try await api.pushed((1...2).map { SyncChangeJSON(recordId: "b\($0)", hlc: stamp, fields: pantryItem()) },
                                           to: home.id, as: bob)
            #expect(two.map(\.status) == ["applied", "rejected"])
            #expect(two[1].code == "quota")
            #expect(two[1].message?.contains("the owner of Home stores 4") == true, "\(two)")
            // And bob's own space is his own count
            _ = try await api.pushed((1...4).map { SyncChangeJSON(recordId: "o\($0)", hlc: stamp, fields: pantryItem()) }, to: nil, as: bob)
        }
    }

    /// Three people push at once to two shared spaces and their own (batches naming both shared
    /// spaces in either order), while one pulls: no push deadlocks, and the puller's cursor skips
    /// nothing in any space.
    @Test(arguments: Backend.available)
    func concurrentPushesToSharedSpacesNeitherDeadlockNorSkipAChange(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob"), carol = try await api.signUp("carol")
            let one = try await api.createdSpace("One", as: alice), two = try await api.createdSpace("Two", as: alice)
            for person in [bob, carol] {
                try await api.join(person, to: one.id, by: alice)
                try await api.join(person, to: two.id, by: alice)
            }
            let pushesDone = SpaceFlag()
            let puller = Task { () -> Set<String> in
                var seen: Set<String> = []
                var cursor: String?
                while true {
                    let finished = await pushesDone.isSet
                    let page = try await api.spacePull(since: cursor, as: alice)
                    seen.formUnion(page.changes.map { "\($0.space)/\($0.recordId)" })
                    cursor = page.cursor
                    if finished, page.changes.isEmpty { return seen }
                }
            }
            let people = [alice, bob, carol]
            let pushed = try await withThrowingTaskGroup(of: Set<String>.self) { group in
                for (index, person) in people.enumerated() {
                    group.addTask {
                        var ids: Set<String> = []
                        for push in 0..<8 {
                            let spaces = (index + push) % 2 == 0 ? [one.id, two.id] : [two.id, one.id]
                            var body: [[String: Any]] = []
                            for (offset, space) in spaces.enumerated() {
                                let recordID = "\(person.username)-\(push)-\(offset)"
                                body.append(["id": UUID().uuidString, "collection": "pantry_items", "recordId": recordID,
                                             "hlc": Stamps.at(-1000, counter: push, node: "n\(index)"), "deleted": false,
                                             "fields": ["name": "x", "quantity": 1, "boughtAt": 1, "status": "inPantry"], "space": space])
                                body.append(["id": UUID().uuidString, "collection": "pantry_items", "recordId": "shared",
                                             "hlc": Stamps.at(0, counter: push, node: "n\(index)"), "deleted": false,
                                             "fields": [String: Any](), "deltas": ["quantity": 1], "space": space])
                                ids.insert("\(space)/\(recordID)")
                            }
                            let json = String(decoding: try JSONSerialization.data(withJSONObject: ["changes": body]), as: UTF8.self)
                            let answer = try await api.send(.post, "/v1/sync/push", headers: person.bearer, json: json)
                            #expect(answer.status == .ok, "\(answer.text)")
                            #expect(!answer.text.contains("rejected"), "\(answer.text)")
                        }
                        return ids
                    }
                }
                var all: Set<String> = []
                for try await ids in group { all.formUnion(ids) }
                return all
            }
            await pushesDone.set()
            let seen = try await puller.value
            #expect(pushed.count == 3 * 8 * 2)
            #expect(pushed.subtracting(seen).isEmpty, "the puller never saw \(pushed.subtracting(seen).count) records")
            // And the deltas added across people: 24 pushes to each space's shared counter
            let records = try await api.pulledAll(as: carol).records
            #expect(records["\(one.id)/shared"]?.fields["quantity"] == 24)
            #expect(records["\(two.id)/shared"]?.fields["quantity"] == 24)
        }
    }
}

/// A one-way signal between test tasks.
private actor SpaceFlag {
    private(set) var isSet = false
    func set() { isSet = true }
}
