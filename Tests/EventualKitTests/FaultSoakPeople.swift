import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

/// What the people of the soak did with what the server refused, over all seeds.
struct SoakTally: Sendable {
    var ruleRefusals = 0
    var roleRefusals = 0
    var kept = 0
    var takenTheirs = 0
    var discarded = 0
    /// Kept as the person's own, from a space they are no longer in (sending it again there is refused on the device).
    var keptAsOwn = 0
    /// Take theirs, refused by the engine because the refusal did not say what the server holds.
    var takeTheirsUnknown = 0
    var madeViewer = 0
    var madeEditor = 0
    var removed = 0
    var uploadsRetried = 0
    var uploadsGivenUp = 0

    static func + (lhs: SoakTally, rhs: SoakTally) -> SoakTally {
        SoakTally(ruleRefusals: lhs.ruleRefusals + rhs.ruleRefusals, roleRefusals: lhs.roleRefusals + rhs.roleRefusals,
                  kept: lhs.kept + rhs.kept, takenTheirs: lhs.takenTheirs + rhs.takenTheirs, discarded: lhs.discarded + rhs.discarded,
                  keptAsOwn: lhs.keptAsOwn + rhs.keptAsOwn,
                  takeTheirsUnknown: lhs.takeTheirsUnknown + rhs.takeTheirsUnknown, madeViewer: lhs.madeViewer + rhs.madeViewer,
                  madeEditor: lhs.madeEditor + rhs.madeEditor, removed: lhs.removed + rhs.removed,
                  uploadsRetried: lhs.uploadsRetried + rhs.uploadsRetried, uploadsGivenUp: lhs.uploadsGivenUp + rhs.uploadsGivenUp)
    }

    var description: String {
        "\(ruleRefusals) changes refused by a rule and \(roleRefusals) for the second person's role or removal; "
            + "settled: \(kept) kept, \(takenTheirs) taken theirs, \(discarded) discarded, \(keptAsOwn) kept as their own (\(takeTheirsUnknown) take-theirs refused: "
            + "the server's record unknown); the owner made the second person a viewer \(madeViewer) times, an editor again "
            + "\(madeEditor), removed them \(removed); refused photo uploads: \(uploadsRetried) retried, \(uploadsGivenUp) given up"
    }
}

/// The people of a seed as they act on their space and on what the server refused: the owner
/// changes the second person's role or removes them, and each person settles a refused change as
/// they choose (keep mine, take theirs, discard), as a person would, never silently.
struct SoakPeople {
    let shared: String
    let secondUsername: String
    /// The second person's role in the shared space; nil once removed.
    private(set) var secondRole: SpaceRole? = .editor

    init(shared: String, secondUsername: String) {
        self.shared = shared
        self.secondUsername = secondUsername
    }

    /// The places the second person's device must hold.
    var secondPlaces: Set<SoakPlace> { secondRole == nil ? [.second] : [.second, .shared] }

    /// The owner makes the second person a viewer, an editor again, or removes them (through the
    /// API, around the proxy: the engine's space calls have tests of their own).
    mutating func changeSecondPersonsRole(_ random: inout SeededGenerator, run: SoakRun) async throws {
        let removing = Int.random(in: 0..<3, using: &random) == 0
        let waiting = try run.c.outbox.entries(state: .pending).filter { $0.kind == .change && $0.space == shared }.count
        if removing {
            guard case .noContent = try await run.direct.client.removeSpaceMember(
                path: .init(spaceId: shared, username: secondUsername), headers: .init(idempotencyKey: UUID().uuidString))
            else { throw TestFailure("the owner could not remove the second person") }
            secondRole = nil
            run.tally.withLock { $0.removed += 1 }
            run.log("owner removes the second person (C queues \(waiting) changes to the shared space)")
            return
        }
        let role: SpaceRole = secondRole == .editor ? .viewer : .editor
        guard case .ok = try await run.direct.client.setSpaceRole(
            path: .init(spaceId: shared, username: secondUsername), headers: .init(idempotencyKey: UUID().uuidString),
            body: .json(.init(role: Components.Schemas.SpaceRole(role))))
        else { throw TestFailure("the owner could not make the second person \(role)") }
        secondRole = role
        run.tally.withLock { role == .viewer ? ($0.madeViewer += 1) : ($0.madeEditor += 1) }
        run.log("owner makes the second person \(role) (C queues \(waiting) changes to the shared space)")
    }

    /// Settles every change of `device` the server refused for the people's reasons (a rule, a
    /// role, a removal), each as its person chooses at random, and retries or gives up its photo
    /// uploads refused for a role or a removal; answers how many it settled. `keeping`: keep mine
    /// (and retrying an upload) is among the choices. Any other refusal is left: it fails the seed.
    @discardableResult
    func settle(_ name: String, _ device: Device, _ model: inout SoakIntent, _ random: inout SeededGenerator, run: SoakRun,
                keeping: Bool) async throws -> Int {
        var settled = 0
        model.remember(try device.outbox.entries())
        // The refused records sent back whole after a restore (with their state), by entry.
        let sentBackWhole = Set(try device.outbox.entries(state: .failed).filter { entry in
            (try? JSONDecoder().decode(ChangePayload.self, from: entry.payload))?.state != nil
        }.map(\.id))
        for failure in try device.engine.failures() {
            let byRule = failure.code != nil
            guard byRule || Self.isRoleRefusal(failure.reason) else { continue }
            run.tally.withLock { byRule ? ($0.ruleRefusals += 1) : ($0.roleRefusals += 1) }
            var choice = [SettleChoice.keepMine(), .takeTheirs, .discard][Int.random(in: keeping ? 0..<3 : 1..<3, using: &random)]
            if choice == .takeTheirs, !failure.knowsServerState {
                // NB: the engine refuses to take a record the refusal did not carry: the person picks again.
                do {
                    try await device.engine.settle(failure.id, .takeTheirs)
                    throw TestFailure("\(name) took theirs for \(failure.recordID) though the server did not say what it holds")
                } catch SettleError.serverStateUnknown {
                    run.tally.withLock { $0.takeTheirsUnknown += 1 }
                }
                choice = keeping && Bool.random(using: &random) ? .keepMine() : .discard
            }
            if choice == .keepMine(), failure.deltas["quantity"] != nil, Bool.random(using: &random) {
                // A person who keeps a use the server refused may say what is left instead: none.
                choice = .keepMine(edits: ["quantity": .number(0)])
            }
            var settlement: Settlement
            do {
                settlement = try await device.engine.settle(failure.id, choice)
            } catch SettleError.notInSpace {
                // NB: out of the space, sending again is refused on the device: the person keeps it as their own, or drops it.
                choice = !failure.deleted && Bool.random(using: &random) ? .keepAsOwn() : .discard
                settlement = try await device.engine.settle(failure.id, choice)
            }
            if sentBackWhole.contains(failure.id), !keepsMine(choice) { model.dropSentBack(failure.recordID, node: device.store.node) }
            switch choice {
            case .keepAsOwn:
                guard let kept = settlement.keptAs, let entry = try device.outbox.entries().last(where: { $0.recordID == kept })
                else { throw TestFailure("\(name) kept \(failure.shortID) as its own and nothing was queued") }
                model.drop(failure.id)
                model.add(kept, try device.fields(of: kept), in: name == "C" ? .second : .first, entry: entry.id)
                run.tally.withLock { $0.keptAsOwn += 1 }
            case .keepMine(let edits):
                guard let queued = settlement.queued else { throw TestFailure("\(name) kept \(failure.shortID) and nothing was queued") }
                // NB: kept, a change of an item thrown away meanwhile brings it back (the engine sets its status).
                let back: [String: SyncValue] = failure.code == SyncRuleViolation.setAside && edits["status"] == nil ? ["status": "inPantry"] : [:]
                model.keep(failure.id, as: queued, edits: edits.merging(back) { $1 })
                run.tally.withLock { $0.kept += 1 }
            case .takeTheirs:
                model.drop(failure.id)
                run.tally.withLock { $0.takenTheirs += 1 }
            case .discard:
                model.drop(failure.id)
                run.tally.withLock { $0.discarded += 1 }
            }
            settled += 1
            run.log("\(name) settles its refused change of \(failure.recordID) (\(failure.reason)): \(choice)"
                + (settlement.restored ? "" : ", the server's record to come"))
            // NB: a kept change is stamped now: a millisecond apart from the next action, as the model assumes.
            try await Task.sleep(for: .milliseconds(2))
        }
        for entry in try device.outbox.entries(state: .failed) where entry.kind == .call && entry.operation == Attachments.uploadOperation {
            guard Self.isRoleRefusal(entry.lastError ?? ""),
                  let upload = try? JSONDecoder().decode(AttachmentUpload.Payload.self, from: entry.payload),
                  let reference = AttachmentReference(sha256: upload.sha256) else { continue }
            // A person retries the photo of an item they still hold, and gives up one they no longer do.
            if keeping, try device.holds(reference, in: upload.space) {
                try await device.outbox.retry(entry.id)
                run.tally.withLock { $0.uploadsRetried += 1 }
                run.log("\(name) retries its refused photo upload \(upload.sha256.prefix(8)) (\(entry.lastError ?? ""))")
            } else {
                try await device.outbox.discard(entry.id)
                model.abandonedUploads.insert(SoakIntent.upload(reference, in: upload.space))
                run.tally.withLock { $0.uploadsGivenUp += 1 }
                run.log("\(name) gives up its refused photo upload \(upload.sha256.prefix(8)) (\(entry.lastError ?? ""))")
            }
            settled += 1
        }
        return settled
    }

    private func keepsMine(_ choice: SettleChoice) -> Bool {
        if case .keepMine = choice { return true }
        return false
    }

    /// Whether the server refused a change for the second person's place in a space: a viewer, or no longer a member.
    static func isRoleRefusal(_ reason: String) -> Bool {
        reason.hasPrefix("You are a viewer of ") || reason.hasPrefix("You are no longer a member of ")
            || reason.hasPrefix("You are not a member of space ")
    }
}

extension Device {
    /// The fields the soak's people write of an item on this device: what a kept-as-own item was made with.
    func fields(of id: String) throws -> [String: SyncValue] {
        try store.reader.read { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT name, quantity, category, photo, status FROM items WHERE id = ?",
                                                    arguments: [id]))
            var fields: [String: SyncValue] = ["name": .string(row["name"]), "quantity": .number(row["quantity"])]
            if let status = row["status"] as String? { fields["status"] = .string(status) }
            if let category = row["category"] as String? { fields["category"] = .string(category) }
            if let photo = row["photo"] as String? { fields["photo"] = .string(photo) }
            // NB: a copy kept as the person's own holds the brand its row held, on an upgraded device.
            if collection.fields["brand"] != nil,
               let brand = try String.fetchOne(db, sql: "SELECT brand FROM items WHERE id = ?", arguments: [id]) {
                fields["brand"] = .string(brand)
            }
            return fields
        }
    }

    /// Whether a row of this device shows the photo in `space` (nil: the person's own).
    func holds(_ reference: AttachmentReference, in space: String?) throws -> Bool {
        try store.reader.read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM items WHERE photo = ? AND space_id IS ?)",
                              arguments: [reference.syncValue.stringValue, space]) ?? false
        }
    }
}
