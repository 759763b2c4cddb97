import Crypto
import EventualAPI
import Foundation
import GRDB
import Logging
import Testing
@testable import EventualKit

/// A device that attaches photos to pantry items: `Device` with its attachments.
private extension Device {
    func attachments(in folder: URL) -> Attachments {
        Attachments(folder: folder, store: store, link: link)
    }
}

@Suite("Attachments: copied under their SHA-256, uploaded through the outbox, resumed after a cut, read local first",
       .timeLimit(.minutes(4)))
struct AttachmentTests {
    private func devices(port: Int, server: URL, scratch: ScratchFolder, aVia: URL? = nil) async throws -> (Device, Device) {
        let user = try await registerUser(port: port)
        let a = try Device(folder: scratch.url.appendingPathComponent("a"), serverURL: aVia ?? server, configuration: .fast)
        let b = try Device(folder: scratch.url.appendingPathComponent("b"), serverURL: server, configuration: .fast)
        for device in [a, b] { try await device.vault.signIn(email: user.email, password: user.password, client: device.link.client) }
        return (a, b)
    }

    private func uploadHandlers(_ device: Device, folder: URL) -> [String: CallHandler] {
        device.attachments(in: folder).uploads
    }

    @Test(arguments: Backend.available)
    func aCutUploadSendsOnlyTheMissingBytesNextTimeAndTheBlobMatchesItsDigest(_ backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let port = try #require(server.port)
            let proxy = try await FaultProxy.start(upstreamPort: port, seed: 24)
            let viaProxy = URL(string: "http://127.0.0.1:\(proxy.port)")!
            let user = try await registerUser(port: port)
            let folder = scratch.url.appendingPathComponent("a-attachments")
            let a = try Device(folder: scratch.url.appendingPathComponent("a"), serverURL: viaProxy, configuration: .fast,
                               calls: [:])
            try await a.vault.signIn(email: user.email, password: user.password, client: a.link.client)
            let engine = SyncEngine(store: a.store, link: a.link, collections: [TableMirror(SyncCollections.pantryItems, table: "items")],
                                    calls: uploadHandlers(a, folder: folder), configuration: .fast, logger: Logger(label: "test"))
            // Given a 3 MiB photo attached to an item offline
            let bytes = jpeg(bytes: 3 * 1024 * 1024, seed: 1)
            let file = scratch.url.appendingPathComponent("photo.jpg")
            try bytes.write(to: file)
            let prepared = try a.attachments(in: folder).prepare(fileAt: file)
            let id = try await a.add("Jam", photo: prepared)
            #expect(try a.attachments(in: folder).waiting() == (1, Int64(bytes.count)))
            // When the connection is cut once 60 % of it went up (the item's change, a few hundred bytes, goes first)
            let beforeUpload = proxy.counters.bytesUp
            proxy.mode = .cutRequestAfter(bytes: bytes.count * 6 / 10)
            let cut = await engine.syncNow(pull: false)
            #expect(cut.failure != nil, "the cut round reported no failure")
            let sentBeforeCut = proxy.counters.bytesUp - beforeUpload
            // And the next round goes through
            proxy.mode = .pass
            let beforeResume = proxy.counters.bytesUp
            let resumed = await engine.syncNow(pull: false)
            let sentAfterCut = proxy.counters.bytesUp - beforeResume
            await proxy.stop()
            #expect(resumed.failure == nil && resumed.calls == 1, "\(String(describing: resumed.failure))")
            // Then the second round sent only what the server had not kept (at most one chunk more,
            // lost with the cut, and the requests' own bytes)
            let missing = bytes.count - sentBeforeCut + AttachmentUpload.chunkBytes + 16 * 1024
            #expect(sentAfterCut < missing, "sent \(sentAfterCut) after the cut, \(sentBeforeCut) before")
            #expect(sentAfterCut < bytes.count * 6 / 10)
            #expect(try a.attachments(in: folder).waiting() == (0, 0))
            // And another device reads it back byte for byte, its digest the reference's
            let b = try Device(folder: scratch.url.appendingPathComponent("b"), serverURL: server)
            try await b.vault.signIn(email: user.email, password: user.password, client: b.link.client)
            _ = await b.engine.syncNow()
            let reference = try #require(try await b.photo(of: id))
            let read = try await b.attachments(in: scratch.url.appendingPathComponent("b-attachments")).data(reference)
            #expect(read == bytes)
            #expect(AttachmentReference(digest: SHA256.hash(data: read)) == reference)
        }
    }

    @Test(arguments: Backend.available)
    func aRecordPulledBeforeItsBlobSaysNotUploadedYetThenReadsBackOnceSent(_ backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            let port = try #require(server.port)
            let (a, b) = try await devices(port: port, server: server, scratch: scratch)
            let folderA = scratch.url.appendingPathComponent("a-attachments"), folderB = scratch.url.appendingPathComponent("b-attachments")
            let engineA = SyncEngine(store: a.store, link: a.link, collections: [TableMirror(SyncCollections.pantryItems, table: "items")],
                                     calls: uploadHandlers(a, folder: folderA), configuration: .fast, logger: Logger(label: "test"))
            // Given the same photo attached to two items: one upload waits
            let bytes = jpeg(bytes: 300_000, seed: 2)
            let file = scratch.url.appendingPathComponent("same.jpg")
            try bytes.write(to: file)
            let first = try await a.add("Tea", photo: try a.attachments(in: folderA).prepare(fileAt: file))
            let second = try await a.add("Coffee", photo: try a.attachments(in: folderA).prepare(fileAt: file))
            #expect(try a.outbox.entries().filter { $0.operation == AttachmentUpload.operation }.count == 1)
            #expect(try a.attachments(in: folderA).waiting() == (1, 300_000))
            #expect(try a.attachments(in: folderA).state(try #require(try await a.photo(of: first))) == .waitingToUpload)
            // When only the items reach the server (the upload is not run yet), and B pulls them
            _ = await a.engine.syncNow()  // the plain device sends changes; it has no upload handler, so the call fails there
            try await a.store.writer.write { db in
                // NB: the plain engine had no handler and failed the call: it waits again, as a fresh upload would.
                try db.execute(sql: "UPDATE eventual_outbox SET state = 'pending', attempts = 0, next_attempt_at = 0 WHERE operation = ?",
                               arguments: [AttachmentUpload.operation])
            }
            _ = await b.engine.syncNow()
            let reference = try #require(try await b.photo(of: second))
            #expect(try await b.photo(of: first) == reference)
            // Then reading it says it is not uploaded yet, at once
            let attachmentsB = b.attachments(in: folderB)
            await #expect(throws: AttachmentError.notUploadedYet) { _ = try await attachmentsB.data(reference) }
            #expect(try attachmentsB.state(reference) == .notOnDevice)
            // And once A sends it, B reads it byte for byte, then from its own copy
            let sent = await engineA.syncNow()
            #expect(sent.failure == nil && sent.calls == 1)
            #expect(try await attachmentsB.data(reference) == bytes)
            #expect(try attachmentsB.state(reference) == .onDevice)
            #expect(FileManager.default.fileExists(atPath: attachmentsB.file(reference).path))
        }
    }

    @Test(arguments: Backend.available)
    func onePhotoOnTwoSharedItemsIsSentOnceFetchedOnceAndFreedOnceBothAreDeletedAndPurged(_ backend: Backend) async throws {
        let server = ServerDatabase()
        try await withLiveServer(on: backend, configure: server.catchLocation) { url, scratch in
            let port = try #require(url.port)
            let proxy = try await FaultProxy.start(upstreamPort: port, seed: 25)
            let owner = try await registerUser(port: port, name: "owner"), member = try await registerUser(port: port, name: "member")
            let a = try Device(folder: scratch.url.appendingPathComponent("a"), serverURL: url, uploadingAttachments: true)
            let c = try Device(folder: scratch.url.appendingPathComponent("c"), serverURL: URL(string: "http://127.0.0.1:\(proxy.port)")!)
            try await a.vault.signIn(email: owner.email, password: owner.password, client: a.link.client)
            try await c.vault.signIn(email: member.email, password: member.password, client: c.link.client)
            let home = try await shareSpace("Home", owner: a.link, member: c.link, memberEmail: member.email)
            // Given the same photo attached to two items of a home two people share
            let bytes = jpeg(bytes: 400_000, seed: 6)
            let file = scratch.url.appendingPathComponent("shelf.jpg")
            try bytes.write(to: file)
            let tea = try await a.add("Tea", photo: try a.attachments.prepare(fileAt: file), space: home)
            let coffee = try await a.add("Coffee", photo: try a.attachments.prepare(fileAt: file), space: home)
            // When the owner's device syncs, the photo goes up once and counts once in their quota
            let sent = await a.engine.syncNow()
            #expect(sent.failure == nil && sent.calls == 1, "\(String(describing: sent.failure))")
            #expect(try await server.attachmentsStored() == 1)
            let counted = try await server.bytesCounted()
            #expect(counted >= Int64(bytes.count), "counted \(counted)")
            // And the other person reads it on both items with one download
            _ = await c.engine.syncNow()
            let reference = try #require(try await c.photo(of: tea))
            #expect(try await c.photo(of: coffee) == reference)
            #expect(try await c.attachments.data(reference, space: home) == bytes)
            #expect(try await c.attachments.data(reference, space: home) == bytes)
            #expect(proxy.requestLog.filter { $0.contains("/content") }.count == 1, "\(proxy.requestLog)")
            await proxy.stop()
            // When both items are deleted, the photo stays until their deletions are purged
            try await a.delete(tea)
            try await a.delete(coffee)
            #expect(await a.engine.syncNow().failure == nil)
            #expect(try await server.collectAttachments() == 0)
            #expect(try await server.attachmentsStored() == 1)
            // Then once they are, housekeeping frees the photo and gives its bytes back: nothing is counted
            #expect(try await server.purgeDeletions() == 2)
            #expect(try await server.collectAttachments() == 1)
            #expect(try await server.attachmentsStored() == 0)
            #expect(try await server.bytesCounted() == 0)
        }
    }

    @Test(arguments: Backend.available)
    func aRecordMovedByADeviceWithoutItsPhotoTakesThePhotoAlongOnceTheDeviceThatTookItHasSentIt(_ backend: Backend) async throws {
        try await withLiveServer(on: backend) { url, scratch in
            let port = try #require(url.port)
            let owner = try await registerUser(port: port, name: "owner"), member = try await registerUser(port: port, name: "member")
            // A phone that sends its changes but not yet its photos, a laptop of the same person, and a member of Home
            let phone = try Device(folder: scratch.url.appendingPathComponent("phone"), serverURL: url)
            let laptop = try Device(folder: scratch.url.appendingPathComponent("laptop"), serverURL: url, uploadingAttachments: true)
            let c = try Device(folder: scratch.url.appendingPathComponent("c"), serverURL: url)
            for device in [phone, laptop] { try await device.vault.signIn(email: owner.email, password: owner.password, client: device.link.client) }
            try await c.vault.signIn(email: member.email, password: member.password, client: c.link.client)
            let home = try await shareSpace("Home", owner: laptop.link, member: c.link, memberEmail: member.email)
            // Given an item with a photo whose change reached the server before the photo did
            let bytes = jpeg(bytes: 300_000, seed: 8)
            let file = scratch.url.appendingPathComponent("tin.jpg")
            try bytes.write(to: file)
            let id = try await phone.add("Tin", photo: try phone.attachments.prepare(fileAt: file))
            _ = await phone.engine.syncNow()  // NB: this engine has no upload handler: the upload fails there, to be sent later
            _ = await laptop.engine.syncNow()
            let reference = try #require(try await laptop.photo(of: id))
            // When the laptop, which has no copy of the photo, moves the item into Home
            try await laptop.store.write { tx in
                let mirror = TableMirror(SyncCollections.pantryItems, table: "items")
                try tx.queueUpload(existing: reference, space: home, from: nil)
                try mirror.delete(id, in: tx)
                try mirror.insert(id, ["name": "Tin", "quantity": 1, "status": "inPantry", "boughtAt": 1_764_000_000_000,
                                       "photo": reference.syncValue], space: home, in: tx)
            }
            // Then its sync goes on past the upload that waits for the phone, and says so
            let waiting = await laptop.engine.syncNow()
            let left = try laptop.outbox.entries().map { "\($0.operation) \($0.state) \($0.lastError ?? "")" }
            #expect(waiting.failure == nil && waiting.deferredCalls == 1 && waiting.sent == 2,
                    "failure \(String(describing: waiting.failure)), deferred \(waiting.deferredCalls), sent \(waiting.sent), calls \(waiting.calls), rejections \(waiting.rejections.map(\.message)), outbox \(left)")
            #expect(try laptop.outbox.entries().map(\.operation) == [Attachments.uploadOperation])
            // When the phone sends its photo, the laptop's next try fetches it and sends it to Home
            try await phone.store.writer.write { db in
                try db.execute(sql: "UPDATE eventual_outbox SET state = 'pending', attempts = 0, next_attempt_at = 0 WHERE operation = ?",
                               arguments: [Attachments.uploadOperation])
            }
            let phoneUploads = SyncEngine(store: phone.store, link: phone.link, collections: [TableMirror(SyncCollections.pantryItems, table: "items")],
                                          calls: phone.attachments.uploads, configuration: .fast, logger: Logger(label: "test"))
            #expect(await phoneUploads.syncNow().calls == 1)
            try await laptop.store.writer.write { db in try db.execute(sql: "UPDATE eventual_outbox SET next_attempt_at = 0") }
            let sent = await laptop.engine.syncNow()
            #expect(sent.failure == nil && sent.calls == 1 && sent.deferredCalls == 0, "\(String(describing: sent.failure))")
            // And the member of Home reads it byte for byte
            _ = await c.engine.syncNow()
            #expect(try await c.photo(of: id) == reference)
            #expect(try await c.attachments.data(reference, space: home) == bytes)
        }
    }

    @Test func aFileThatIsNotAnImageOrTooLargeIsRefusedBeforeAnythingIsQueued() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let device = try Device(folder: scratch.url.appendingPathComponent("a"), serverURL: URL(string: "http://127.0.0.1:9")!)
        let attachments = device.attachments(in: scratch.url.appendingPathComponent("attachments"))
        let text = scratch.url.appendingPathComponent("notes.txt")
        try Data("not a photo".utf8).write(to: text)
        #expect(throws: AttachmentError.notAnImage) { _ = try attachments.prepare(fileAt: text) }
        let empty = scratch.url.appendingPathComponent("empty.jpg")
        try Data().write(to: empty)
        #expect(throws: AttachmentError.empty) { _ = try attachments.prepare(fileAt: empty) }
        let large = scratch.url.appendingPathComponent("large.jpg")
        try jpeg(bytes: Int(Attachments.maxBytes) + 1, seed: 3).write(to: large)
        #expect(throws: AttachmentError.tooLarge(bytes: Attachments.maxBytes + 1)) { _ = try attachments.prepare(fileAt: large) }
        #expect(throws: AttachmentError.unreadable(scratch.url.appendingPathComponent("missing.jpg").path)) {
            _ = try attachments.prepare(fileAt: scratch.url.appendingPathComponent("missing.jpg"))
        }
        // A folder, and a FIFO (which would block a read for ever), are not files
        #expect(throws: AttachmentError.notAFile(scratch.url.path)) { _ = try attachments.prepare(fileAt: scratch.url) }
        let fifo = scratch.url.appendingPathComponent("pipe.jpg")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        #expect(throws: AttachmentError.notAFile(fifo.path)) { _ = try attachments.prepare(fileAt: fifo) }
        #expect(try device.outbox.entries().isEmpty)
        // And the words say what is wrong, the size past the limit never rounded down to it
        #expect(AttachmentError.tooLarge(bytes: Attachments.maxBytes + 1).description
            == "the file is 20.1 MiB; an attachment is at most 20.0 MiB")
    }
}
