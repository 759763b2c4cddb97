import Crypto
import EventualAPI
import Foundation
import GRDB

/// A person's attachments on this device: photos of scans, receipts, items.
///
/// Attaching is two steps, so that no file is read inside a database transaction:
/// `prepare(fileAt:)` checks the file (JPEG, PNG or HEIC by its bytes, at most 20 MiB), copies it
/// into the person's folder under its SHA-256 and answers its reference; then, inside the local
/// write that puts the reference in a record's field, `LocalTransaction.queueUpload(_:space:)`
/// queues its upload in the outbox. The record and its upload commit together or not at all: a
/// crash leaves at most a copied file nothing refers to. The upload is an outbox call
/// (`AttachmentUpload`), sent once per blob and space however many records refer to it, and
/// resumed where a cut connection stopped.
///
/// Reading goes local copy first, else a download (`data(_:space:)`), which says "not uploaded
/// yet" at once when the server has no complete blob. Downloads are kept within `budget` bytes
/// (the least recently read go first); the person's own attachments stay until sign-out, which
/// removes the whole folder with their store.
public struct Attachments: Sendable {
    /// Where the files are, named by their SHA-256.
    public let folder: URL
    let store: LocalStore
    let link: ServerLink
    /// Bytes of downloaded attachments kept on the device.
    public var budget: Int64 = 200 * 1024 * 1024

    /// The outbox operation of an upload (a command counts them apart from its app's calls).
    public static let uploadOperation = "attachment.upload"

    /// The largest attachment, as the server's default `maxAttachmentBytes`.
    public static let maxBytes: Int64 = 20 * 1024 * 1024

    public init(folder: URL, store: LocalStore, link: ServerLink) {
        self.folder = folder
        self.store = store
        self.link = link
    }

    /// The outbox call that uploads these attachments, for an engine's `calls` (`SignedInDevice` adds it itself).
    public var uploads: [String: CallHandler] {
        [AttachmentUpload.operation: AttachmentUpload.handler(self)]
    }

    // MARK: - Attaching

    /// Checks `url` and copies it in under its SHA-256 (once: the same bytes attached again are
    /// the same file). Throws `AttachmentError` for a file that cannot be read, is empty, too
    /// large or not a JPEG, PNG or HEIC, before anything is queued.
    public func prepare(fileAt given: URL) throws -> PreparedAttachment {
        // NB: a link to a photo is the photo.
        let url = given.resolvingSymlinksInPath()
        let data: Data
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            // NB: a FIFO or a device would block the read for ever, a folder cannot be read: only a file is attached.
            guard attributes[.type] as? FileAttributeType == .typeRegular else { throw AttachmentError.notAFile(given.path) }
            let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
            guard size <= Self.maxBytes else { throw AttachmentError.tooLarge(bytes: size) }
            data = try Data(contentsOf: url)
        } catch let error as AttachmentError {
            throw error
        } catch {
            throw AttachmentError.unreadable(given.path)
        }
        guard !data.isEmpty else { throw AttachmentError.empty }
        guard Int64(data.count) <= Self.maxBytes else { throw AttachmentError.tooLarge(bytes: Int64(data.count)) }
        guard let type = AttachmentContentType.recognise(data) else { throw AttachmentError.notAnImage }
        let reference = AttachmentReference(digest: SHA256.hash(data: data))
        try keep(data, as: reference)
        return PreparedAttachment(reference: reference, size: Int64(data.count), contentType: type)
    }

    /// Writes the bytes under their name, whole or not at all (a temporary file renamed).
    private func keep(_ data: Data, as reference: AttachmentReference) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let file = self.file(reference)
        if FileManager.default.fileExists(atPath: file.path) { return }
        let partial = folder.appendingPathComponent(".\(reference.sha256).\(UUID().uuidString)")
        do {
            try data.write(to: partial, options: .atomic)
            try FileManager.default.moveItem(at: partial, to: file)
        } catch {
            try? FileManager.default.removeItem(at: partial)
            // NB: another process may have kept the same bytes meanwhile: then they are here.
            if FileManager.default.fileExists(atPath: file.path) { return }
            // NB: nothing of it is left: the partial file is removed, and no row names it yet.
            if DeviceStorageFailure.isFull(error) { throw AttachmentError.cannotStore("this device's storage is full: free some space") }
            throw AttachmentError.cannotStore(String(describing: (error as NSError).localizedDescription))
        }
    }

    /// The file of an attachment on this device (present or not).
    public func file(_ reference: AttachmentReference) -> URL { folder.appendingPathComponent(reference.sha256) }

    // MARK: - Reading

    /// Where an attachment stands for this device.
    public func state(_ reference: AttachmentReference) throws -> AttachmentState {
        switch try store.reader.read({ db in try AttachmentTable.upload(of: reference.sha256, db) }) {
        case .waiting: return .waitingToUpload
        case .refused(let reason): return .uploadRefused(reason)
        case nil: return FileManager.default.fileExists(atPath: file(reference).path) ? .onDevice : .notOnDevice
        }
    }

    /// The bytes of an attachment: the copy on this device, else downloaded from `space` (nil:
    /// the person's own) and kept. Throws `AttachmentError.notUploadedYet` when the server has no
    /// complete blob (its record came first), and a `RemoteFailure` when it cannot be asked.
    public func data(_ reference: AttachmentReference, space: String? = nil) async throws -> Data {
        if let data = try? Data(contentsOf: file(reference)) {
            try? await store.writer.write { db in try AttachmentTable.used(reference.sha256, at: UnixMillis.now(), db) }
            return data
        }
        var path = "/v1/attachments/\(reference.sha256)/content"
        if let space, let encoded = space.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(["&", "=", "+"])) {
            path += "?space=" + encoded
        }
        // NB: an image or, when there is none, the error's JSON.
        let (response, body) = try await link.send(.get, path, body: nil, contentType: "", accept: "image/*, application/json",
                                                   operationID: "getAttachmentContent", maxAnswerBytes: Int(Self.maxBytes) + 1)
        if response.status.code == 404 {
            let answer = try? JSONDecoder().decode(AttachmentUpload.ErrorAnswer.self, from: body)
            if answer?.code == "not_uploaded" { throw AttachmentError.notUploadedYet }
        }
        guard response.status == .ok else { throw RemoteFailure.answer(response.status.code, body) }
        // NB: kept only when the bytes are what the reference names: a proxy's page is never a photo.
        guard AttachmentReference(digest: SHA256.hash(data: body)) == reference else { throw AttachmentError.corrupt }
        try keep(body, as: reference)
        let budget = self.budget, folder = self.folder
        let evicted = try await store.writer.write { db in
            try AttachmentTable.downloaded(reference.sha256, size: Int64(body.count), space: space, at: UnixMillis.now(), db)
            return try AttachmentTable.evict(beyond: budget, keeping: reference.sha256, db)
        }
        for sha256 in evicted { try? FileManager.default.removeItem(at: folder.appendingPathComponent(sha256)) }
        return body
    }

    /// Removes the files of attachments this device no longer keeps (those of a space it left).
    @Sendable func removeFiles(_ sha256s: [String]) {
        for sha256 in sha256s { try? FileManager.default.removeItem(at: folder.appendingPathComponent(sha256)) }
    }

    /// Attachments and bytes waiting to be uploaded.
    public func waiting() throws -> (count: Int, bytes: Int64) {
        try store.reader.read { db in try AttachmentTable.waiting(db) }
    }
}

/// A file checked and copied in, ready to be referred to by a record.
public struct PreparedAttachment: Sendable, Equatable {
    public let reference: AttachmentReference
    public let size: Int64
    public let contentType: AttachmentContentType
}

public enum AttachmentState: Sendable, Equatable {
    /// Here, and its upload waits.
    case waitingToUpload
    /// Here, and the server refused its upload, for this reason: retry or discard it (`status` lists it).
    case uploadRefused(String)
    /// Here, uploaded (or downloaded).
    case onDevice
    /// Not on this device: reading downloads it.
    case notOnDevice
}

public enum AttachmentError: Error, Equatable, CustomStringConvertible {
    case unreadable(String)
    /// A folder, a FIFO, a device: not a file to attach.
    case notAFile(String)
    case empty
    case tooLarge(bytes: Int64)
    case notAnImage
    case cannotStore(String)
    /// The server has no complete blob for this reference yet: its record arrived first.
    case notUploadedYet
    /// What the server sent is not the bytes the reference names.
    case corrupt

    public var description: String {
        switch self {
        // NB: said after the path ("photo.jpg: there is no such file…"): never the path twice.
        case .unreadable: return "there is no such file, or it cannot be read"
        case .notAFile: return "it is not a file (a folder, a pipe or a device)"
        case .empty: return "the file is empty"
        case .tooLarge(let bytes):
            return "the file is \(ByteCount.text(bytes)); an attachment is at most \(ByteCount.text(Attachments.maxBytes))"
        case .notAnImage: return AttachmentContentType.refusal
        case .cannotStore(let reason): return "cannot keep the file on this device: \(reason)"
        case .notUploadedYet: return "not uploaded yet: the device that attached it has not sent it; try again after it syncs"
        case .corrupt: return "the server sent other bytes than the attachment's; nothing was kept"
        }
    }

}

extension LocalTransaction {
    /// Forgets an attachment this device no longer needs (a scan's photo once classified), unless
    /// an upload of it still waits: answers whether its file may be deleted now.
    public func forgetAttachment(_ reference: AttachmentReference) throws -> Bool {
        guard try AttachmentTable.upload(of: reference.sha256, db) == nil else { return false }
        try db.execute(sql: "DELETE FROM eventual_attachments WHERE sha256 = ?", arguments: [reference.sha256])
        return true
    }

    /// Drops this device's refused uploads of an attachment, when what needed it was dropped (a
    /// scan discarded after its photo was refused): nothing is left to settle for it.
    public func dropRefusedUploads(of reference: AttachmentReference) throws {
        try db.execute(sql: """
            DELETE FROM eventual_outbox WHERE kind = 'call' AND operation = ? AND state = 'failed' AND coalescing_key LIKE ?
            """, arguments: [AttachmentUpload.operation, "%:\(reference.sha256)"])
    }

    /// Queues the upload of an attachment to `space` because a record that refers to it moved
    /// there from `origin` (nil: the person's own space), so that the new space's members can
    /// read it. The file on this device is sent; when it is not here (downloaded and evicted, or
    /// never read), the upload fetches it from `origin` first.
    /// NB: a file here is then kept like one attached here, until its upload is done and sign-out.
    public func queueUpload(existing reference: AttachmentReference, space: String?, from origin: String?) throws {
        let size = try Int64.fetchOne(db, sql: "SELECT size FROM eventual_attachments WHERE sha256 = ?", arguments: [reference.sha256])
        if size != nil {
            try db.execute(sql: "UPDATE eventual_attachments SET origin = 'mine' WHERE sha256 = ?", arguments: [reference.sha256])
        }
        let payload = AttachmentUpload.Payload(sha256: reference.sha256, size: size, space: space, from: .init(space: origin))
        try enqueueCall(AttachmentUpload.operation, payload: payload,
                        coalescingKey: "\(AttachmentUpload.operation):\(space ?? "-"):\(reference.sha256)")
    }

    /// Queues the upload of a prepared attachment to `space` (nil: the person's own), once per
    /// blob and space, in this transaction; answers the value a record's field holds.
    @discardableResult
    public func queueUpload(_ attachment: PreparedAttachment, space: String? = nil) throws -> SyncValue {
        try AttachmentTable.mine(attachment, at: UnixMillis.now(), db)
        let payload = AttachmentUpload.Payload(sha256: attachment.reference.sha256, size: attachment.size, space: space)
        // NB: coalesced: the same photo on two records of one space is one upload.
        try enqueueCall(AttachmentUpload.operation, payload: payload,
                        coalescingKey: "\(AttachmentUpload.operation):\(space ?? "-"):\(attachment.reference.sha256)")
        return attachment.reference.syncValue
    }
}

extension CallContext {
    /// Where this device's upload of an attachment stands: `.waitingToUpload`, `.uploadRefused`
    /// with the server's words, or nil (sent, or never queued here). A call that needs the blob on
    /// the server (a scan of a photo) defers while the upload waits, and fails with its reason
    /// once it is refused, rather than being sent again for ever.
    public func upload(of reference: AttachmentReference) async throws -> AttachmentState? {
        switch try await store.reader.read({ db in try AttachmentTable.upload(of: reference.sha256, db) }) {
        case .waiting: .waitingToUpload
        case .refused(let reason): .uploadRefused(reason)
        case nil: nil
        }
    }
}
