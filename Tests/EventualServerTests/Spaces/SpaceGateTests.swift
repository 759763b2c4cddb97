import EventualAPI
import EventualStorage
import Foundation
import SQLKit
import Testing
@testable import EventualServer

/// The gate is the one way into a space. Its two promises, tried for every kind of person and at
/// the odd orders: sync, spaces and attachments give one person one answer about one space, and
/// whatever holds a space's lock keeps every push to that space waiting until it commits.
@Suite("The space gate: one answer about who is in, one lock", .timeLimit(.minutes(3)))
struct SpaceGateTests {
    private typealias Fixture = AttachmentFixture
    private static let dave = "dave-id"

    /// A pantry item written by `userID` to `space`, as the store receives it.
    private static func submission(_ id: String, to space: String, record: String = UUID().uuidString) -> SyncSubmission {
        let change = ValidatedChange(collection: "pantry_items", recordID: record, stamp: HLCStamp(millis: UnixMillis.now(), counter: 0, node: "gate"),
                                     fields: ["name": .string("Jam"), "quantity": .integer(1), "boughtAt": .integer(1_700_000_000_000),
                                              "status": .string("inPantry")],
                                     deltas: [:], deleted: false)
        return SyncSubmission(id: id, space: space, change: .success(change))
    }

    /// What a push, an attachment's begin and a read of records answer `userID` about `space`:
    /// nil where they let them in, else the words they refuse with.
    private static func answers(of userID: String, about space: String, in fixture: Fixture) async throws
        -> (push: String?, attach: String?, read: String?)
    {
        let sync = SyncStore(database: fixture.database)
        let outcome = try await sync.push([submission(UUID().uuidString, to: space)], userID: userID, now: UnixMillis.now())[0]
        let push: String? = if case .rejected(let message) = outcome { message } else { nil }
        func refusal(_ body: () async throws -> Void) async throws -> String? {
            do { try await body() } catch let refusal as Refusal { return refusal.message }
            return nil
        }
        let bytes = Fixture.jpeg(100)
        let attach = try await refusal {
            _ = try await fixture.store.begin(Fixture.sha256(bytes), size: 100, in: space, by: userID, byteQuota: .max, now: UnixMillis.now())
        }
        let read = try await refusal { _ = try await sync.records(["x"], of: "pantry_items", in: space, for: userID) }
        return (push, attach, read)
    }

    @Test(arguments: Backend.available)
    func everyDoorGivesOnePersonOneAnswerAboutOneSpace(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            let home = fixture.home
            // Given dave, who was in Home and left it
            try await fixture.database.transaction { sql in
                let now = UnixMillis.now()
                try await sql.insert(into: "users")
                    .columns("id", "username", "username_key", "email", "email_key", "password_hash", "created_at", "updated_at")
                    .values(SQLBind(Self.dave), SQLBind("dave"), SQLBind("dave"), SQLBind("d@example.com"), SQLBind("d@example.com"),
                            SQLBind("x"), SQLBind(now), SQLBind(now)).run()
                try await sql.insert(into: "space_members").columns("space_id", "user_id", "role", "added_at", "left_at")
                    .values(SQLBind(home), SQLBind(Self.dave), SQLBind("editor"), SQLBind(now), SQLBind(now)).run()
            }
            // Then the owner and an editor are let in everywhere
            for writer in [Fixture.alice, Fixture.bob] {
                let answers = try await Self.answers(of: writer, about: home, in: fixture)
                #expect(answers.push == nil && answers.attach == nil && answers.read == nil, "\(writer): \(answers)")
            }
            // And a viewer reads but writes nothing, records or files
            let viewer = try await Self.answers(of: Fixture.carol, about: home, in: fixture)
            #expect(viewer.push == "You are a viewer of Home: only its owner and editors change it")
            #expect(viewer.attach == "You are a viewer of Home: only its owner and editors attach files")
            #expect(viewer.read == nil)
            // And one who left is not let in anywhere, nor told more than one who never was
            let left = try await Self.answers(of: Self.dave, about: home, in: fixture)
            #expect(left.push == "You are no longer a member of Home")
            #expect(left.attach == "You are not a member of space \(home)" && left.read == left.attach)
            // And another's personal space, and a space that does not exist, answer the same words
            for space in [Fixture.alice, "no-such-space"] {
                let stranger = try await Self.answers(of: Fixture.bob, about: space, in: fixture)
                let words = "You are not a member of space \(space)"
                #expect(stranger.push == words && stranger.attach == words && stranger.read == words, "\(space): \(stranger)")
            }
            // And the gate itself says the same
            let (daveRole, dave, carol, nowhere) = try await fixture.database.withConnection { sql in
                (try await SpaceGate.role(of: Self.dave, in: home, on: sql), try await SpaceGate.access(of: Self.dave, to: home, on: sql),
                 try await SpaceGate.role(of: Fixture.carol, in: home, on: sql),
                 try await SpaceGate.access(of: Fixture.bob, to: "no-such-space", on: sql))
            }
            #expect(daveRole == nil && dave?.left == true && dave?.role == .editor)
            #expect(carol == .viewer && nowhere == nil)
        }
    }

    @Test(arguments: Backend.available)
    func aPushWaitsForWhoeverHoldsItsSpacesLockAndTakesTheNextSeq(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            let home = fixture.home, sync = SyncStore(database: fixture.database)
            let released = Flag()
            let started = Flag()
            // Given a transaction that holds Home's lock (as a hand-over or a purge does) for a while
            let holder = Task {
                try await fixture.database.transaction { sql in
                    try await SpaceGate.lock([home], on: sql)
                    await started.set()
                    try await Task.sleep(for: .milliseconds(400))
                    // NB: set before COMMIT: a push that returns having not seen it did not wait.
                    await released.set()
                }
            }
            while !(await started.isSet) { try await Task.sleep(for: .milliseconds(5)) }
            // When bob pushes to Home meanwhile
            let outcomes = try await sync.push([Self.submission("c1", to: home, record: "r1")], userID: Fixture.bob, now: UnixMillis.now())
            // Then the push returned only after the holder let go, and applied
            #expect(await released.isSet)
            #expect(outcomes == [.applied])
            try await holder.value
            // And its record took the space's next seq
            let page = try await sync.pull(userID: Fixture.bob, after: nil, limit: 10)
            #expect(page.records.map(\.recordID) == ["r1"] && page.records.first?.seq == 1)
        }
    }

    @Test(.enabled(if: Backend.available.contains(.postgres), "on SQLite every write transaction waits for the one writer anyway"))
    func aPushToAnotherSpaceDoesNotWaitForTheLock() async throws {
        try await Fixture.with(.postgres) { fixture in
            let home = fixture.home, sync = SyncStore(database: fixture.database)
            let released = Flag(), started = Flag()
            let holder = Task {
                try await fixture.database.transaction { sql in
                    try await SpaceGate.lock([home], on: sql)
                    await started.set()
                    try await Task.sleep(for: .seconds(2))
                    await released.set()
                }
            }
            while !(await started.isSet) { try await Task.sleep(for: .milliseconds(5)) }
            // When bob pushes to his own space while Home is held
            let outcomes = try await sync.push([Self.submission("c2", to: Fixture.bob)], userID: Fixture.bob, now: UnixMillis.now())
            // Then it applied without waiting
            #expect(outcomes == [.applied])
            #expect(!(await released.isSet))
            try await holder.value
        }
    }
}
