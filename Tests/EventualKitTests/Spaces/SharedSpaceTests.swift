import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

@Suite("Shared spaces: two people's devices through a real server", .timeLimit(.minutes(4)))
struct SharedSpaceTests {
    /// Ann and Bob, one device each, signed in.
    func annAndBob(_ server: URL, _ scratch: ScratchFolder) async throws -> (ann: (Device, Person), bob: (Device, Person)) {
        let ann = try await registerPerson(server, name: "ann"), bob = try await registerPerson(server, name: "bob")
        return ((try await Device.of(ann, server: server, folder: scratch.url.appendingPathComponent("ann")), ann),
                (try await Device.of(bob, server: server, folder: scratch.url.appendingPathComponent("bob")), bob))
    }

    /// Ann and Bob in Ann's household, and an item of it on both their devices: the household's and the item's ids.
    func sharedItem(_ name: String, quantity: Double, _ server: URL, _ scratch: ScratchFolder) async throws
        -> (ann: (Device, Person), bob: (Device, Person), home: String, item: String) {
        let (ann, bob) = try await annAndBob(server, scratch)
        let home = try await household(ann: ann, bob: bob)
        let item = try await ann.0.put(name, quantity: quantity, in: home)
        _ = await ann.0.engine.syncNow()
        _ = await bob.0.engine.syncNow()
        return (ann, bob, home, item)
    }

    @Test(arguments: Backend.available, [false, true])
    func twoPeopleOfflineEachUseOneOfThreeAndOneIsLeftEverywhere(backend: Backend, bobFirst: Bool) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let (ann, bob, home, yoghurt) = try await sharedItem("Yoghurt", quantity: 3, server, scratch)
            #expect(try bob.0.spaceItems() == [SpaceItem(name: "Yoghurt", quantity: 3, space: home, changedBy: ann.1.username)])
            // Given both, in the basement, take one of the three
            try await ann.0.use(yoghurt, 1)
            // NB: a moment apart, so that Bob's take is stamped after Ann's whatever the clocks' resolution
            try await Task.sleep(for: .milliseconds(5))
            try await bob.0.use(yoghurt, 1)
            // When they sync in either order, then again
            for device in bobFirst ? [bob.0, ann.0, bob.0] : [ann.0, bob.0, ann.0] {
                let report = await device.engine.syncNow()
                #expect(report.isComplete, "\(report.rejections) \(String(describing: report.failure))")
            }
            // Then both devices and the server (a new device of Ann's) hold one
            let fresh = try await Device.of(ann.1, server: server, folder: scratch.url.appendingPathComponent("ann-new"))
            _ = await fresh.engine.syncNow()
            // (by Bob, who made the newest change, whichever of them synced last)
            for device in [ann.0, bob.0, fresh] {
                #expect(try device.spaceItems() == [SpaceItem(name: "Yoghurt", quantity: 1, space: home, changedBy: bob.1.username)])
            }
        }
    }

    @Test(arguments: Backend.available)
    func discardingAChangeRefusedWithoutTheServersRecordEndsEqualToTheServer(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let (ann, bob, home, yoghurt) = try await sharedItem("Yoghurt", quantity: 3, server, scratch)
            // Given Bob, offline, takes one, while Ann makes him a viewer
            try await bob.0.use(yoghurt, 1)
            try await ann.0.spaces(of: ann.1).setRole(.viewer, of: bob.1.username, in: home)
            _ = await ann.0.engine.syncNow()
            // When Bob syncs, his take is refused for his role, and the refusal does not say what the server holds
            let refused = await bob.0.engine.syncNow()
            #expect(refused.rejected == 1, "\(refused.rejections)")
            let failure = try #require(try bob.0.engine.failures().first)
            #expect(!failure.knowsServerState)
            // And he discards it, and syncs
            _ = try await bob.0.engine.settle(failure.id, .discard)
            _ = await bob.0.engine.syncNow()
            // Then his device holds the server's three again, as Ann's does, and nothing waits
            let onBob = try bob.0.spaceItems(), onAnn = try ann.0.spaceItems()
            #expect(onBob == onAnn, "\(onBob) \(onAnn)")
            #expect(onBob.first?.quantity == 3)
            #expect(try bob.0.outbox.entries().isEmpty)
        }
    }

    @Test(arguments: Backend.available)
    func aViewersChangeFailsWithTheReasonAndTheRestOfTheBatchApplies(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let (ann, bob) = try await annAndBob(server, scratch)
            let home = try await household(ann: ann, bob: bob, role: .viewer)
            let milk = try await ann.0.put("Milk", quantity: 2, in: home)
            _ = await ann.0.engine.syncNow()
            _ = await bob.0.engine.syncNow()
            // Given Bob, a viewer, adds two things of his own and uses some of the household's milk between them
            try await bob.0.put("Tea", quantity: 1, in: nil)
            try await bob.0.use(milk, 1)
            try await bob.0.put("Bread", quantity: 1, in: nil)
            // When he syncs
            let report = await bob.0.engine.syncNow()
            // Then the milk is refused with the reason, and his own two things reached the server
            #expect(report.sent == 2 && report.rejected == 1)
            #expect(try bob.0.refusals() == ["You are a viewer of Home: only its owner and editors change it"])
            let fresh = try await Device.of(bob.1, server: server, folder: scratch.url.appendingPathComponent("bob-new"))
            _ = await fresh.engine.syncNow()
            #expect(try fresh.spaceItems().map(\.description) == [
                "Bread ×1.0 in own by \(bob.1.username)", "Milk ×2.0 in \(home) by \(ann.1.username)", "Tea ×1.0 in own by \(bob.1.username)",
            ])
            _ = await ann.0.engine.syncNow()
            #expect(try ann.0.spaceItems().map(\.quantity) == [2])
        }
    }

    @Test(arguments: Backend.available)
    func aRemovedPersonsDeviceDeletesTheSpaceAndFailsTheirWaitingChangesAndKeepsTheirOwn(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let (ann, bob) = try await annAndBob(server, scratch)
            let home = try await household(ann: ann, bob: bob)
            let milk = try await ann.0.put("Milk", quantity: 2, in: home)
            try await ann.0.put("Eggs", quantity: 6, in: home)
            _ = await ann.0.engine.syncNow()
            try await bob.0.put("Tea", quantity: 1, in: nil)
            _ = await bob.0.engine.syncNow()
            #expect(try bob.0.spaceItems().count == 3)
            // Given Bob uses some milk offline, and Ann removes him meanwhile
            try await bob.0.use(milk, 1)
            try await ann.0.spaces(of: ann.1).remove(bob.1.username, from: home)
            #expect(await ann.0.engine.syncNow().calls == 1)
            // When Bob syncs
            let report = await bob.0.engine.syncNow()
            // Then Home's rows are gone, his change to it failed with the reason, his own tea stays
            #expect(report.rejected == 1)
            #expect(try bob.0.refusals() == ["You are no longer a member of Home"])
            #expect(try bob.0.spaceItems() == [SpaceItem(name: "Tea", quantity: 1, space: nil, changedBy: bob.1.username)])
            #expect(try bob.0.spaces(of: bob.1).list().map(\.kind) == [.personal])
            // And Ann's milk is as she left it
            _ = await ann.0.engine.syncNow()
            #expect(try ann.0.spaceItems().map(\.quantity) == [6, 2])
        }
    }

    @Test(arguments: Backend.available)
    func aChangeStillWaitingWhenTheRemovalArrivesIsFailedByThePullWithTheReason(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let (ann, bob, home, milk) = try await sharedItem("Milk", quantity: 2, server, scratch)
            // Given Bob's use of the milk waits out a backoff (the last attempt failed), and Ann removes him
            try await bob.0.use(milk, 1)
            try await bob.0.store.writer.write { db in
                try db.execute(sql: "UPDATE eventual_outbox SET next_attempt_at = ?", arguments: [UnixMillis.now() + 3_600_000])
            }
            try await ann.0.spaces(of: ann.1).remove(bob.1.username, from: home)
            _ = await ann.0.engine.syncNow()
            // When Bob's engine runs a round of its own (nothing is due to be sent: it only pulls)
            await bob.0.engine.start()
            let deadline = ContinuousClock.now + .seconds(30)
            while try bob.0.refusals().isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            await bob.0.engine.stop()
            // Then the pull that says he was removed failed the change with the reason, and took Home's rows away
            #expect(try bob.0.refusals() == ["You are no longer a member of Home"])
            #expect(try bob.0.spaceItems().isEmpty)
            #expect(bob.0.engine.currentStatus.lastEvent == .rejected(entryID: try #require(try bob.0.outbox.entries().first?.id),
                                                                      message: "You are no longer a member of Home"))
        }
    }

    @Test(arguments: Backend.available)
    func aDeviceRemovedFromASpaceBeforeItsFirstPullDropsWhatItWroteThere(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let (ann, bob) = try await annAndBob(server, scratch)
            let home = try await household(ann: ann, bob: bob)
            // Given a new device of Bob's puts tea in Home and sends it, but has not pulled yet
            let phone = try await Device.of(bob.1, server: server, folder: scratch.url.appendingPathComponent("bob-phone"))
            try await phone.put("Tea", quantity: 1, in: home)
            #expect(await phone.engine.syncNow(pull: false).sent == 1)
            // When Ann removes him, and the phone pulls for the first time
            try await ann.0.spaces(of: ann.1).remove(bob.1.username, from: home)
            _ = await ann.0.engine.syncNow()
            let first = await phone.engine.syncNow()
            // Then the tea leaves the phone, as it leaves his other device, and stays Ann's
            #expect(first.failure == nil)
            #expect(try phone.spaceItems().isEmpty)
            _ = await bob.0.engine.syncNow()
            #expect(try bob.0.spaceItems().isEmpty)
            _ = await ann.0.engine.syncNow()
            #expect(try ann.0.spaceItems().map(\.name) == ["Tea"])
        }
    }

    @Test(arguments: Backend.available)
    func aRefusedValueOfAFieldTheServerNeverHadLeavesTheRowOnceDiscarded(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let (ann, bob, home, milk) = try await sharedItem("Milk", quantity: 2, server, scratch)
            // Given Bob files the milk under dairy offline (no one ever gave it a category), while Ann makes him a viewer
            try await bob.0.store.write { tx in try Device.items.update(milk, setting: ["category": "dairy"], in: tx) }
            try await ann.0.spaces(of: ann.1).setRole(.viewer, of: bob.1.username, in: home)
            _ = await ann.0.engine.syncNow()
            #expect(await bob.0.engine.syncNow().rejected == 1)
            // When he discards his refused change, and syncs
            let failure = try #require(try bob.0.engine.failures().first)
            let settled = try await bob.0.engine.settle(failure.id, .discard)
            let refetch = await bob.0.engine.syncNow()
            #expect(!settled.restored && refetch.failure == nil, "\(settled) \(refetch)")
            // Then his row is the server's record again: no category, as on Ann's device
            let category = { (device: Device) in
                try device.store.reader.read { db in
                    (try #require(try Row.fetchOne(db, sql: "SELECT category FROM items WHERE id = ?", arguments: [milk])))["category"] as String?
                }
            }
            #expect(try category(bob.0) == nil, "\(String(describing: try? bob.0.outbox.entries()))")
            #expect(try category(ann.0) == nil)
            #expect(try bob.0.outbox.entries().isEmpty)
        }
    }

    @Test(arguments: Backend.available)
    func aChangeKeptAfterARemovalThenDiscardedLeavesNoRowOfTheSpace(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let (ann, bob, home, milk) = try await sharedItem("Milk", quantity: 2, server, scratch)
            // Given Bob uses some milk offline, Ann removes him, and his sync takes Home's rows away
            try await bob.0.use(milk, 1)
            try await ann.0.spaces(of: ann.1).remove(bob.1.username, from: home)
            _ = await ann.0.engine.syncNow()
            _ = await bob.0.engine.syncNow()
            #expect(try bob.0.spaceItems().isEmpty)
            // When he would keep his use, saying none is left: refused on his device (the row would come back into
            // a space he is not in, to be refused again), and nothing is written; so he discards it
            let failure = try #require(try bob.0.engine.failures().first)
            await #expect(throws: SettleError.notInSpace(failure.shortID, reason: failure.reason)) {
                try await bob.0.engine.settle(failure.id, .keepMine(edits: ["quantity": .number(0)]))
            }
            #expect(try bob.0.spaceItems().isEmpty)
            try await bob.0.engine.settle(failure.id, .discard)
            _ = await bob.0.engine.syncNow()
            // Then no row of Home is left on his device, and nothing waits
            #expect(try bob.0.spaceItems().isEmpty)
            #expect(try bob.0.outbox.entries().isEmpty)
        }
    }

    @Test(arguments: Backend.available)
    func aDeviceNewToASpaceGetsAllOfItAndOneThatHasItOnlyWhatChanged(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let (ann, bob) = try await annAndBob(server, scratch)
            // Given Bob's device has synced his own things before he joins
            try await bob.0.put("Tea", quantity: 1, in: nil)
            _ = await bob.0.engine.syncNow()
            let home = try await household(ann: ann, bob: bob)
            let ids = try await (0..<5).asyncMap { try await ann.0.put("Item \($0)", quantity: 1, in: home) }
            _ = await ann.0.engine.syncNow()
            // When his device pulls: all of Home, though its cursor was past his own tea
            #expect(await bob.0.engine.syncNow().pulled == 5)
            // And after one change, only that one
            try await ann.0.use(ids[2], 1)
            _ = await ann.0.engine.syncNow()
            #expect(await bob.0.engine.syncNow().pulled == 1)
            // And a new device of his gets everything he is in
            let fresh = try await Device.of(bob.1, server: server, folder: scratch.url.appendingPathComponent("bob-new"))
            #expect(await fresh.engine.syncNow().pulled == 6)
            #expect(try fresh.spaceItems() == bob.0.spaceItems())
        }
    }

    @Test(arguments: Backend.available)
    func aSpaceCreatedOfflineExistsBeforeItsFirstItemAndAnItemAddedBeforeLeavingArrives(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let (ann, bob) = try await annAndBob(server, scratch)
            // Given Ann, offline, creates a space, puts an item in it and invites Bob, in that order
            let cottage = try await ann.0.spaces(of: ann.1).create(name: "Cottage")
            try await ann.0.put("Jam", quantity: 4, in: cottage)
            try await ann.0.spaces(of: ann.1).invite(bob.1.username, to: cottage, role: .editor)
            // When she syncs once: all of it applies
            let report = await ann.0.engine.syncNow()
            #expect(report.isComplete && report.sent == 1 && report.calls == 2, "\(report.rejections)")
            // Given Bob joins (invited by email), then, offline, adds an item and leaves
            let invitation = try #require(try await bob.0.spaces(of: bob.1).invitations().value.waiting.first)
            #expect(invitation.spaceName == "Cottage" && invitation.invitedBy == ann.1.username && invitation.role == .editor)
            try await bob.0.spaces(of: bob.1).accept(invitation.id)
            _ = await bob.0.engine.syncNow()
            try await bob.0.put("Honey", quantity: 1, in: cottage)
            try await bob.0.spaces(of: bob.1).leave(cottage)
            // When he syncs: the honey arrives before he leaves, and the cottage leaves his device
            let left = await bob.0.engine.syncNow()
            #expect(left.isComplete && left.sent == 1 && left.calls == 1, "\(left.rejections)")
            #expect(try bob.0.spaceItems().isEmpty)
            _ = await ann.0.engine.syncNow()
            #expect(try ann.0.spaceItems().map(\.name) == ["Honey", "Jam"])
        }
    }

    @Test(arguments: Backend.available)
    func anOwnerLeavesOnlyAfterHandingTheSpaceOverAndTheRefusalIsNotRetried(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let (ann, bob) = try await annAndBob(server, scratch)
            let home = try await household(ann: ann, bob: bob)
            try await ann.0.put("Milk", quantity: 1, in: home)
            _ = await ann.0.engine.syncNow()
            // When Ann, the owner, leaves while Bob is in Home, it is refused on her device, with the next step, and nothing is queued
            await #expect(throws: SpaceError.ownerWithOthers("Home", others: [bob.1.username])) {
                try await ann.0.spaces(of: ann.1).leave(home)
            }
            #expect(try ann.0.outbox.entries().filter { $0.operation.hasPrefix("spaces.") }.isEmpty)
            // And a call the server would refuse all the same, queued by hand, is refused for good with its words, and Home stays
            try await ann.0.store.write { tx in
                try tx.enqueueCall(SpaceCall.removeMember.rawValue, payload: SpaceCall.Member(spaceId: home, username: ann.1.username), space: home)
            }
            let refused = await ann.0.engine.syncNow()
            #expect(refused.rejected == 1 && refused.failure == nil)
            let reason = try #require(try ann.0.refusals().first)
            #expect(reason.contains("Home") && reason.contains("owner"), "\(reason)")
            #expect(try ann.0.spaceItems().map(\.name) == ["Milk"])
            // A role change for someone not in Home is refused on her device too
            await #expect(throws: SpaceError.notAMember("nobody-here", "Home")) {
                try await ann.0.spaces(of: ann.1).setRole(.viewer, of: "nobody-here", in: home)
            }
            // When she makes Bob the owner first, then leaves
            try await ann.0.outbox.discard(try #require(try ann.0.outbox.entries(state: .failed).first).id)
            try await ann.0.spaces(of: ann.1).setRole(.owner, of: bob.1.username, in: home)
            try await ann.0.spaces(of: ann.1).leave(home)
            let left = await ann.0.engine.syncNow()
            // Then both calls apply, Home leaves her device, and Bob owns it
            #expect(left.isComplete && left.calls == 2, "\(left.rejections)")
            #expect(try ann.0.spaceItems().isEmpty)
            let members = try await bob.0.spaces(of: bob.1).members(of: home)
            #expect(members.value.owner == bob.1.username && members.value.members.map(\.username) == [bob.1.username])
        }
    }

    @Test(arguments: Backend.available)
    func someoneOutsideASpaceNeitherWritesNorReadsItByItsId(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let (ann, bob) = try await annAndBob(server, scratch)
            let home = try await ann.0.spaces(of: ann.1).create(name: "Home")
            try await ann.0.put("Milk", quantity: 1, in: home)
            _ = await ann.0.engine.syncNow()
            // When Bob, never invited, writes to Home by its id
            try await bob.0.put("Intruder", quantity: 1, in: home)
            let report = await bob.0.engine.syncNow()
            // Then it is refused in the same words as for a space that does not exist, and he pulls nothing of it
            #expect(report.rejected == 1)
            #expect(try bob.0.refusals() == ["You are not a member of space \(home)"])
            #expect(try bob.0.spaceItems().map(\.name) == ["Intruder"])
            _ = await ann.0.engine.syncNow()
            #expect(try ann.0.spaceItems().map(\.name) == ["Milk"])
            // And inviting himself is refused with the server's words, not retried
            try await bob.0.store.write { tx in
                try tx.enqueueCall(SpaceCall.invite.rawValue, payload: SpaceCall.Invite(spaceId: home, invitee: bob.1.username, role: .editor),
                                   space: home)
            }
            let invite = await bob.0.engine.syncNow()
            #expect(invite.rejected == 1 && invite.failure == nil)
        }
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
