import EventualAPI
import Foundation
import GRDB
import HTTPTypes
import OpenAPIRuntime
import Testing
@testable import EventualKit

/// Issue 45: a person over the record quota was wedged. A push past the quota was refused whole,
/// and a failed push skipped the round's pull, so their device never sent an edit, never heard of
/// another device's change, and listed nothing under its failures. Now a refusal is per change,
/// and a failed push never stops the pull.
@Suite("A person over a quota is never wedged")
struct RefusedPushTests {
    /// Two devices of one person, signed in; the first talks to the server through `middlewares`.
    private func twoDevices(_ server: URL, _ scratch: ScratchFolder, middlewares: [any ClientMiddleware] = []) async throws
        -> (Device, Device) {
        let person = try await registerPerson(server, name: "quota")
        let first = try Device(folder: scratch.url.appendingPathComponent("first"), serverURL: server, middlewares: middlewares)
        try await first.vault.signIn(email: person.email, password: person.password, client: first.link.client)
        return (first, try await Device.of(person, server: server, folder: scratch.url.appendingPathComponent("second")))
    }

    @Test(.timeLimit(.minutes(1)), arguments: Backend.available)
    func aDeviceOverTheRecordQuotaSendsItsEditsReceivesTheRenameAndListsWhatDidNotFit(_ backend: Backend) async throws {
        try await withLiveServer(on: backend, configure: { $0.quotas.syncRecordsPerUser = 6 }) { server, scratch in
            let (first, second) = try await twoDevices(server, scratch)
            // Given five items synced to both devices, where six may be stored
            var items: [String] = []
            for index in 0..<5 { items.append(try await first.add("Item \(index)", quantity: 2)) }
            #expect(await first.engine.syncNow().isComplete)
            #expect(await second.engine.syncNow().pulled == 5)
            // And the first device, offline, adds three, sets one's quantity and removes another
            var added: [String] = []
            for index in 1...3 { added.append(try await first.add("New \(index)")) }
            try await first.edit(items[0], quantity: 7)
            try await first.delete(items[1])
            // While the other device renames a third
            try await second.rename(items[2], to: "Renamed")
            #expect(await second.engine.syncNow().isComplete)

            // When the first device syncs
            let report = await first.engine.syncNow()

            // Then it sent the edit, the removal and the one new item that fits, and received the rename
            #expect(report.failure == nil, "\(String(describing: report.failure))")
            #expect(report.sent == 3 && report.rejected == 2, "\(report.rejections)")
            #expect(try first.items().first { $0.id == items[2] }?.name == "Renamed")
            // And it lists the other two new items, refused with code quota and the server's words
            let failures = try first.engine.failures()
            #expect(failures.map(\.recordID) == [added[1], added[2]])
            for failure in failures {
                #expect(failure.code == SyncRuleViolation.quota)
                #expect(failure.reason.hasPrefix("Quota reached: you store 6 synced records, and at most 6 are allowed"), "\(failure.reason)")
            }
            // And the other device receives the edit, the removal and the item that fit, and none that did not
            _ = await second.engine.syncNow()
            let onSecond = try second.items()
            #expect(onSecond.first { $0.id == items[0] }?.quantity == 7)
            #expect(!onSecond.contains { $0.id == items[1] })
            #expect(Set(onSecond.map(\.id)).intersection(added) == [added[0]], "\(onSecond)")

            // When the person discards one and sends the other again
            _ = try await first.engine.settle(failures[0].id, .discard)
            _ = try await first.engine.settle(failures[1].id, .keepMine())
            let again = await first.engine.syncNow()
            // Then the discarded one is gone from the device, and the other fits now: the removal freed its place
            #expect(try !first.items().contains { $0.id == added[1] })
            #expect(again.failure == nil && again.rejected == 0, "\(again.rejections)")
            #expect(try first.engine.failures().isEmpty)
            _ = await second.engine.syncNow()
            #expect(try second.items().contains { $0.id == added[2] })
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: Backend.available)
    func aMembersNewItemPastTheOwnersQuotaIsListedWhileTheMembersChangeGoes(_ backend: Backend) async throws {
        try await withLiveServer(on: backend, configure: { $0.quotas.syncRecordsPerUser = 2 }) { server, scratch in
            let ann = try await registerPerson(server, name: "ann"), bob = try await registerPerson(server, name: "bob")
            let annDevice = try await Device.of(ann, server: server, folder: scratch.url.appendingPathComponent("ann"))
            let bobDevice = try await Device.of(bob, server: server, folder: scratch.url.appendingPathComponent("bob"))
            let home = try await household(ann: (annDevice, ann), bob: (bobDevice, bob))
            // Given Bob's jam in Ann's Home and Ann's own tea: the two records Ann may store
            let jam = try await bobDevice.put("Jam", quantity: 3, in: home)
            #expect(await bobDevice.engine.syncNow().isComplete)
            _ = try await annDevice.put("Tea", quantity: 1, in: nil)
            #expect(await annDevice.engine.syncNow().isComplete)
            // When Bob, offline, takes a jam and adds honey to Home, then syncs
            try await bobDevice.use(jam, 1)
            let honey = try await bobDevice.put("Honey", quantity: 1, in: home)
            let report = await bobDevice.engine.syncNow()
            // Then his take goes, and the honey is listed, refused for Ann's quota in her words
            #expect(report.failure == nil && report.sent == 1 && report.rejected == 1, "\(report.rejections)")
            let failure = try #require(try bobDevice.engine.failures().first)
            #expect(failure.recordID == honey && failure.code == SyncRuleViolation.quota)
            #expect(failure.reason.hasPrefix("Quota reached: the owner of Home stores 2 synced records"), "\(failure.reason)")
            // And Ann's device holds two jams and no honey
            _ = await annDevice.engine.syncNow()
            let onAnn = try annDevice.spaceItems()
            #expect(onAnn.first { $0.name == "Jam" }?.quantity == 2 && !onAnn.contains { $0.name == "Honey" }, "\(onAnn)")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aPushTheServerFailsStillLetsThePullRunAndTheChangesWait() async throws {
        try await withLiveServer { server, scratch in
            // Given a device whose pushes the server fails (503), and an item on both devices
            let (first, second) = try await twoDevices(server, scratch, middlewares: [AnswersPushes(status: 503, refusing: nil)])
            let item = try await second.add("Oat milk")
            #expect(await second.engine.syncNow().isComplete)
            _ = await first.engine.syncNow()
            // And an edit on the first device, while the other renames the item
            try await first.edit(item, quantity: 4)
            try await second.rename(item, to: "Oat drink")
            #expect(await second.engine.syncNow().isComplete)
            // When the first device syncs
            let report = await first.engine.syncNow()
            // Then its report says why its change waits, and the pull ran: the rename is here, the edit kept
            #expect(report.failure == .transient(status: 503, message: "refused by the test"), "\(String(describing: report.failure))")
            #expect(report.pulled == 1)
            #expect(try first.items() == [Item(id: item, name: "Oat drink", quantity: 4, category: nil)])
            #expect(try first.outbox.counts() == OutboxCounts(pending: 1, failed: 0))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aPushAnOlderServerRefusesWholeIsSentAgainChangeByChange() async throws {
        try await withLiveServer { server, scratch in
            // Given a server that, as one before per-change quotas did, refuses whole (413) a push holding a new item
            let (first, second) = try await twoDevices(server, scratch, middlewares: [AnswersPushes(status: 413, refusing: "new-item")])
            let item = try await first.add("Tea")
            #expect(await first.engine.syncNow().isComplete)
            _ = await second.engine.syncNow()
            // And, offline, the first device adds the new item and edits the old one, while the other renames it
            try await first.add("Honey", id: "new-item")
            try await first.edit(item, quantity: 3)
            try await second.rename(item, to: "Green tea")
            #expect(await second.engine.syncNow().isComplete)
            // When the first device syncs
            let report = await first.engine.syncNow()
            // Then the edit went, the new item alone is listed with the server's words, and the rename came
            #expect(report.failure == nil && report.sent == 1 && report.rejected == 1, "\(report.rejections)")
            #expect(try first.engine.failures().map(\.recordID) == ["new-item"])
            #expect(try first.engine.failures().first?.reason == "refused by the test")
            #expect(try first.items().first { $0.id == item } == Item(id: item, name: "Green tea", quantity: 3, category: nil))
        }
    }

    /// Queues a change as an engine that let a NUL through did, with the entry id `old-change`.
    private func queueUnreadableChange(on device: Device) async throws {
        let payload = try JSONEncoder.sorted.encode(ChangePayload(
            hlc: HLCStamp(millis: UnixMillis.now() - 1000, counter: 0, node: "old").description,
            fields: ["name": "Oat\u{0}milk", "quantity": 1, "boughtAt": 1_764_000_000_000, "status": "inPantry"], deltas: nil, deleted: false))
        try await device.store.writer.write { db in
            try db.execute(sql: """
                INSERT INTO eventual_outbox (id, kind, operation, record_id, payload, created_at)
                VALUES ('old-change', 'change', 'pantry_items', 'old-item', ?, 0)
                """, arguments: [payload])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aChangeAnOlderEngineQueuedThatTheServerCannotReadFailsAloneAndTheRestGo() async throws {
        try await withLiveServer { server, scratch in
            let (first, second) = try await twoDevices(server, scratch)
            // Given a change queued by an engine that let a NUL through, before a good one
            try await queueUnreadableChange(on: first)
            let good = try await first.add("Tea")
            // When it syncs, the server refusing the batch whole for the NUL
            let report = await first.engine.syncNow()
            // Then the good change went, and the unreadable one fails alone with the server's words
            #expect(report.failure == nil && report.sent == 1 && report.rejected == 1, "\(report.rejections)")
            let failure = try #require(try first.engine.failures().first)
            #expect(failure.id == "old-change" && failure.reason == "changes[0].fields.name must not contain a NUL byte", "\(failure.reason)")
            _ = await second.engine.syncNow()
            #expect(try second.items().map(\.id) == [good])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aLoneChangeTheServerCannotReadFailsAndTheRoundGoesOn() async throws {
        try await withLiveServer { server, scratch in
            let (first, second) = try await twoDevices(server, scratch)
            // Given the unreadable change alone in the outbox, and an item the other device made
            try await queueUnreadableChange(on: first)
            let theirs = try await second.add("Tea")
            #expect(await second.engine.syncNow().isComplete)
            // When the device syncs
            let report = await first.engine.syncNow()
            // Then the change fails with the server's words, and the round went on to pull
            #expect(report.failure == nil && report.rejected == 1, "\(String(describing: report.failure)) \(report.rejections)")
            #expect(try first.engine.failures().map(\.id) == ["old-change"])
            #expect(try first.items().map(\.id) == [theirs])
        }
    }
}

/// Answers the device's pushes itself, as a failing or an older server would: every push with
/// `status`, or only those holding a change of the record `refusing`, the others sent on.
private struct AnswersPushes: ClientMiddleware {
    let status: Int
    let refusing: String?

    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws
        -> (HTTPResponse, HTTPBody?) {
        guard operationID == "syncPush" else { return try await next(request, body, baseURL) }
        var bytes = Data()
        if let body { bytes = try await Data(collecting: body, upTo: 16 * 1024 * 1024) }
        if let refusing {
            struct Push: Decodable { struct Change: Decodable { let recordId: String }; let changes: [Change] }
            let push = try JSONDecoder().decode(Push.self, from: bytes)
            guard push.changes.contains(where: { $0.recordId == refusing }) else { return try await next(request, HTTPBody(bytes), baseURL) }
        }
        var response = HTTPResponse(status: .init(code: status))
        response.headerFields[.contentType] = "application/json"
        return (response, HTTPBody(#"{"statusCode":\#(status),"error":"Refused","message":"refused by the test"}"#))
    }
}
