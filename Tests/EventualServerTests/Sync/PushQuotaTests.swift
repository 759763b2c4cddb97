import EventualAPI
import EventualStorage
import Foundation
import SQLKit
import Synchronization
import Testing
@testable import EventualServer

/// A quota refuses the changes that would pass it, one by one in the batch's order, never the
/// push: what fits applies, edits and deletions of stored records always go, and a refused change
/// is not written, takes no seq and takes no room from the changes after it.
@Suite("Push quotas refuse a change, never a push", .timeLimit(.minutes(2)))
struct PushQuotaTests {
    private typealias Fixture = AttachmentFixture

    /// A pantry item's change as the store receives it: new fields, a delta of its quantity, or a deletion.
    private static func change(_ record: String, to space: String, fields: [String: SyncValue]? = nil,
                               deltas: [String: Double] = [:], deleted: Bool = false) -> SyncSubmission {
        let stamp = HLCStamp(millis: UnixMillis.now() - 1000, counter: order.add(1, ordering: .relaxed).newValue, node: "quota")
        let fields = fields ?? (deleted || !deltas.isEmpty ? [:] : ["name": .string("Jam"), "quantity": .integer(1),
                                                                   "boughtAt": .integer(1_700_000_000_000), "status": .string("inPantry")])
        let validated = ValidatedChange(collection: "pantry_items", recordID: record, stamp: stamp, fields: fields, deltas: deltas, deleted: deleted)
        return SyncSubmission(id: UUID().uuidString, space: space, change: .success(validated))
    }

    /// The counters of the stamps, so that each change of a test is newer than the one before.
    private static let order = Atomic<Int>(0)

    /// The code of a refusal, or the outcome's kind.
    private static func kinds(_ outcomes: [SyncOutcome]) -> [String] {
        outcomes.map { outcome in
            switch outcome {
            case .applied: return "applied"
            case .duplicate: return "duplicate"
            case .rejected: return "rejected"
            case .refused(let violation, _): return violation.code
            }
        }
    }

    private static func message(_ outcome: SyncOutcome) -> String {
        if case .refused(let violation, _) = outcome { return violation.message }
        return "\(outcome)"
    }

    /// Stores `count` items for `userID` in `space`, records `r0`, `r1`, …
    private static func store(_ count: Int, in space: String, by userID: String, _ sync: SyncStore) async throws {
        let outcomes = try await sync.push((0..<count).map { change("r\($0)", to: space) }, userID: userID, now: UnixMillis.now())
        #expect(kinds(outcomes) == Array(repeating: "applied", count: count))
    }

    /// The records of `space`, by id, with their seq.
    private static func seqs(in space: String, _ database: Database) async throws -> [String: Int64] {
        try await database.withConnection { sql in
            var seqs: [String: Int64] = [:]
            for row in try await sql.select().columns("record_id", "seq").from("sync_records").where("space_id", .equal, space).all() {
                seqs[try row.decode(column: "record_id", as: String.self)] = try row.decode(column: "seq", as: Int64.self)
            }
            return seqs
        }
    }

    @Test(arguments: Backend.available)
    func whatFitsTheRecordQuotaAppliesInBatchOrderAndEditsAndDeletionsAlwaysGo(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            let sync = SyncStore(database: fixture.database), alice = Fixture.alice
            // Given alice stores five records, and may store six
            try await Self.store(5, in: alice, by: alice, sync)
            let before = try await Self.seqs(in: alice, fixture.database)
            // When a batch adds three, edits one, deletes one and takes from one
            let batch = [Self.change("new-1", to: alice), Self.change("new-2", to: alice), Self.change("new-3", to: alice),
                         Self.change("r0", to: alice, fields: ["name": .string("Edited")]), Self.change("r1", to: alice, deleted: true),
                         Self.change("r2", to: alice, deltas: ["quantity": -1])]
            let (outcomes, moves) = try await sync.pushed(batch, userID: alice, now: UnixMillis.now(), quota: 6, by: nil)
            // Then the first new one applies, the other two are refused with code quota, and the rest go
            #expect(Self.kinds(outcomes) == ["applied", SyncRuleViolation.quota, SyncRuleViolation.quota, "applied", "applied", "applied"])
            #expect(Self.message(outcomes[1]).hasPrefix("Quota reached: you store 6 synced records, and at most 6 are allowed."),
                    "\(Self.message(outcomes[1]))")
            // And the refused ones are not written and took no seq: four records moved, to the next four
            let after = try await Self.seqs(in: alice, fixture.database)
            #expect(after["new-2"] == nil && after["new-3"] == nil)
            let last = before.values.max() ?? 0
            #expect(Set(["new-1", "r0", "r1", "r2"].compactMap { after[$0] }) == Set((last + 1)...(last + 4)))
            // And the live channel hears the space move to the last of them
            #expect(moves.map(\.space) == [alice] && moves.first?.position == last + 4, "\(moves)")
        }
    }

    @Test(arguments: Backend.available)
    func aChangeRefusedForAnyReasonTakesNoRoomFromTheChangesAfterIt(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            let sync = SyncStore(database: fixture.database), alice = Fixture.alice
            // Given alice has room for one more record
            try await Self.store(5, in: alice, by: alice, sync)
            // When a batch adds one a rule refuses, then one refused once and sent again, then another
            let bad = Self.change("bad", to: alice, fields: ["name": .string("Jam"), "quantity": .integer(1),
                                                             "boughtAt": .integer(1_700_000_000_000), "status": .string("eaten")])
            let outcomes = try await sync.push([bad, Self.change("fits", to: alice), Self.change("fits", to: alice, fields: ["name": "Jelly"]),
                                                Self.change("late", to: alice)],
                                               userID: alice, now: UnixMillis.now(), quota: 6)
            // Then the rule's refusal took no place: the next new record fits, its own edit adds none, the last does not fit
            #expect(Self.kinds(outcomes) == [SyncRuleViolation.notAllowed, "applied", "applied", SyncRuleViolation.quota])
        }
    }

    @Test(arguments: Backend.available)
    func theByteQuotaRefusesOnlyTheChangesThatWouldPassIt(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            let sync = SyncStore(database: fixture.database), alice = Fixture.alice
            let long: SyncValue = .string(String(repeating: "é", count: 750))  // 1,500 bytes in UTF-8
            func item(_ id: String, _ description: SyncValue) -> SyncSubmission {
                Self.change(id, to: alice, fields: ["name": .string("Jam"), "quantity": .integer(1), "boughtAt": .integer(1_700_000_000_000),
                                                    "status": .string("inPantry"), "description": description])
            }
            // Given 4,000 bytes hold two records of a long description, not three
            let outcomes = try await sync.push([item("a", long), item("b", long), item("c", long), item("d", "Oat"),
                                                Self.change("a", to: alice, fields: ["description": "Oat"])],
                                               userID: alice, now: UnixMillis.now(), byteQuota: 4_000)
            // Then the third long one alone is refused, the small one fits, and a shrink goes
            #expect(Self.kinds(outcomes) == ["applied", "applied", SyncRuleViolation.quota, "applied", "applied"])
            #expect(Self.message(outcomes[2]).contains("for you, and at most 4 KiB are allowed"), "\(Self.message(outcomes[2]))")
            // And what is counted is what is stored, the refused record not among it
            let (counted, stored) = try await fixture.database.withConnection { sql in
                let counted = try await sql.select().column("bytes").from("storage_usage").where("user_id", .equal, alice).first()?
                    .decode(column: "bytes", as: Int64.self)
                let stored = try await sql.raw("""
                    SELECT CAST(SUM(octet_length(fields) + octet_length(field_stamps) + COALESCE(octet_length(counter_deltas), 0)
                        + COALESCE(octet_length(tombstone), 0)) AS BIGINT) AS bytes FROM sync_records WHERE space_id = \(bind: alice)
                    """).first()?.decode(column: "bytes", as: Int64.self)
                return (counted, stored)
            }
            #expect(counted == stored && counted != nil, "\(String(describing: counted)) \(String(describing: stored))")
            #expect(try await Self.seqs(in: alice, fixture.database)["c"] == nil)
        }
    }

    @Test(arguments: Backend.available)
    func theOwnersQuotaRefusesAMembersNewRecordWhileTheMembersEditGoes(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            let sync = SyncStore(database: fixture.database), alice = Fixture.alice, bob = Fixture.bob, home = fixture.home
            // Given bob's item in alice's Home, and alice's own two: three, the most alice may store
            let shared = try await sync.push([Self.change("shared", to: home)], userID: bob, now: UnixMillis.now(), quota: 3)
            #expect(Self.kinds(shared) == ["applied"])
            try await Self.store(2, in: alice, by: alice, sync)
            // When bob edits the shared item, adds one to Home and one to his own space
            let (outcomes, moves) = try await sync.pushed(
                [Self.change("shared", to: home, fields: ["name": "Edited"]), Self.change("more", to: home), Self.change("mine", to: bob)],
                userID: bob, now: UnixMillis.now(), quota: 3, by: nil)
            // Then his edit goes, the new item in Home is refused for alice's quota, and his own space is his own count
            #expect(Self.kinds(outcomes) == ["applied", SyncRuleViolation.quota, "applied"])
            #expect(Self.message(outcomes[1]).hasPrefix("Quota reached: the owner of Home stores 3 synced records"), "\(Self.message(outcomes[1]))")
            #expect(Set(moves.map(\.space)) == [home, bob])
        }
    }

    @Test(arguments: Backend.available)
    func twoPushesForOneOwnerAtOnceNeverStorePastTheQuota(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            let sync = SyncStore(database: fixture.database), alice = Fixture.alice, bob = Fixture.bob, home = fixture.home
            // When alice pushes to her own space and bob to her Home at once, each more than her quota holds
            for round in 0..<3 {
                let applied = try await withThrowingTaskGroup(of: Int.self) { group in
                    for (userID, space) in [(alice, alice), (bob, home)] {
                        group.addTask {
                            let outcomes = try await sync.push((0..<8).map { Self.change("\(userID)-\(round)-\($0)", to: space) },
                                                               userID: userID, now: UnixMillis.now(), quota: 10 * (round + 1))
                            return Self.kinds(outcomes).filter { $0 == "applied" }.count
                        }
                    }
                    return try await group.reduce(0, +)
                }
                // Then together they store exactly what fits, whichever went first
                #expect(applied == 10, "round \(round): \(applied)")
            }
            let stored = try await fixture.database.withConnection { sql in try await SyncRecordRows.count(ownedBy: alice, on: sql) }
            #expect(stored == 30)
        }
    }

    @Test(arguments: Backend.available)
    func aSpaceWhoseEveryChangeIsRefusedDoesNotMove(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            let sync = SyncStore(database: fixture.database), alice = Fixture.alice
            try await Self.store(1, in: alice, by: alice, sync)
            let (outcomes, moves) = try await sync.pushed([Self.change("one", to: alice), Self.change("two", to: alice)],
                                                          userID: alice, now: UnixMillis.now(), quota: 1, by: nil)
            #expect(Self.kinds(outcomes) == [SyncRuleViolation.quota, SyncRuleViolation.quota])
            #expect(moves.isEmpty, "\(moves)")
        }
    }
}
