import Crypto
import EventualAPI
import EventualStorage
import Foundation
import NIOCore
import SQLKit

/// Spaces' blobs (attachments), in the database so that every server process on one PostgreSQL
/// serves them: begun with their size, appended chunk by chunk from where the server stands (so a
/// cut upload resumes), checked against their SHA-256 once the last byte is in, and only then
/// counted in the byte quota of the space's owner.
///
/// Locks, so that two appends, a change of owner and housekeeping never see half of each other:
/// an append holds its upload's row (its conditional UPDATE takes PostgreSQL's row lock; SQLite's
/// single writer is exclusive already), and the append that completes a blob first locks the
/// space's counter row, as a push, a change of owner and housekeeping do, always before the
/// attachment's row, so that no two of them wait on each other the other way round.
struct AttachmentStore: Sendable {
    let database: Database
    var limits = AttachmentLimits()

    /// What a write decided, to be said once its transaction is committed: a deleted upload's
    /// refusal must not roll the deletion back.
    private enum Decision: Sendable {
        case status(AttachmentStatus)
        case refused(Refusal)
    }

    // MARK: Upload

    /// Begins the upload of `sha256` (`size` bytes) into the space, or answers how far it is: a
    /// blob the space has complete needs nothing more, an upload under way resumes at `received`.
    /// Beginning with another size starts the upload over. A size the owner's `byteQuota` has no
    /// room for, counting their other uploads under way, is refused before a byte is sent.
    func begin(_ sha256: String, size: Int64, in spaceID: String, by userID: String, byteQuota: Int64,
               now: Int64) async throws -> AttachmentStatus {
        try await database.transaction { sql in
            let access = try await access(to: spaceID, for: userID, now: now, on: sql)
            try requireWriter(access)
            if let current = try await touch(sha256, in: spaceID, now: now, on: sql), current.complete || current.size == size {
                return current
            }
            try await requireRoom(for: size, of: sha256, in: spaceID, beganBy: userID, byteQuota: byteQuota, on: sql)
            // NB: a begin with another size than an upload under way replaces it: one of the two is
            // wrong about the blob, and the wrong one would fail its digest check anyway.
            try await sql.delete(from: "attachments").where("space_id", .equal, spaceID).where("sha256", .equal, sha256).run()
            try await sql.insert(into: "attachments")
                .columns("space_id", "sha256", "size", "received", "complete", "created_at", "touched_at", "begun_by")
                .values(SQLBind(spaceID), SQLBind(sha256), SQLBind(size), SQLBind(Int64(0)), SQLBind(0), SQLBind(now), SQLBind(now),
                        SQLBind(userID))
                .run()
            return AttachmentStatus(space: spaceID, sha256: sha256, size: size, received: 0, complete: false, contentType: nil)
        }
    }

    /// Stores `bytes` at `offset` of a begun upload: only where the upload stands (else
    /// `Refusal.offsetMismatch` with what it has). The first bytes must show a JPEG, a PNG or a
    /// HEIC; the last ones complete the blob if it matches its digest, counting its size in the
    /// owner's `byteQuota` (past it the whole request is undone: the upload stays incomplete).
    /// A blob complete already answers its status and stores nothing (a retry after a lost answer).
    func append(_ bytes: ByteBuffer, at offset: Int64, to sha256: String, in spaceID: String, by userID: String,
                byteQuota: Int64, now: Int64) async throws -> AttachmentStatus {
        let count = Int64(bytes.readableBytes)
        let decision: Decision = try await database.transaction { sql in
            let access = try await access(to: spaceID, for: userID, now: now, on: sql)
            try requireWriter(access)
            guard let before = try await status(of: sha256, in: spaceID, on: sql) else { throw Self.notBegun(sha256) }
            if before.complete { return .status(before) }
            guard count > 0 else { throw Refusal.invalid("The body is empty: send the bytes from \(before.received) on") }
            guard offset == before.received else { throw Self.offsetMismatch(received: before.received) }
            // NB: `offset` comes from the wire: its sum with the count is checked, never trusted.
            let (end, overflow) = offset.addingReportingOverflow(count)
            guard !overflow, end <= before.size else { throw Self.pastTheEnd(size: before.size, count: count, offset: offset) }
            if end == before.size {
                try await SpaceGate.lock([spaceID], on: sql)
            }
            // NB: the condition re-reads the row under its lock: of two appends at one offset, the
            // second finds `received` moved on and is told where to resume.
            let moved = try await sql.raw("""
                UPDATE attachments SET received = received + \(bind: count), touched_at = \(bind: now)
                WHERE space_id = \(bind: spaceID) AND sha256 = \(bind: sha256) AND complete = 0
                  AND received = \(bind: offset) AND received + \(bind: count) <= size
                RETURNING size, content_type
                """).first()
            guard let moved else {
                guard let current = try await status(of: sha256, in: spaceID, on: sql) else { throw Self.notBegun(sha256) }
                if current.complete { return .status(current) }
                guard current.received == offset else { throw Self.offsetMismatch(received: current.received) }
                throw Self.pastTheEnd(size: current.size, count: count, offset: offset)
            }
            let size = try moved.decode(column: "size", as: Int64.self)
            try await sql.insert(into: "attachment_chunks").columns("space_id", "sha256", "byte_offset", "data")
                .values(SQLBind(spaceID), SQLBind(sha256), SQLBind(offset), SQLBind(bytes)).run()
            var contentType = try moved.decode(column: "content_type", as: String?.self).flatMap(AttachmentContentType.init(rawValue:))
            let received = end
            if contentType == nil, received >= min(Int64(AttachmentContentType.bytesNeeded), size) {
                let head = try await storedHead(of: sha256, in: spaceID, before: offset, on: sql) + Array(bytes.readableBytesView)
                guard let recognised = AttachmentContentType.recognise(head) else {
                    try await delete(sha256, in: spaceID, on: sql)
                    return .refused(.unsupportedContent(AttachmentContentType.refusal))
                }
                contentType = recognised
                try await sql.update("attachments").set("content_type", to: recognised.rawValue)
                    .where("space_id", .equal, spaceID).where("sha256", .equal, sha256).run()
            }
            guard received == size else {
                return .status(AttachmentStatus(space: spaceID, sha256: sha256, size: size, received: received, complete: false,
                                                contentType: contentType))
            }
            guard try await digest(of: sha256, in: spaceID, on: sql) == sha256 else {
                try await delete(sha256, in: spaceID, on: sql)
                return .refused(.digestMismatch("The bytes do not match their SHA-256: send them again"))
            }
            try await sql.update("attachments").set("complete", to: 1).set("completed_at", to: now)
                .where("space_id", .equal, spaceID).where("sha256", .equal, sha256).run()
            let ownerID = try await owner(of: spaceID, on: sql)
            try await StorageUsage.add(size, for: ownerID, quota: byteQuota, on: sql,
                                       advice: "Photos of deleted records free their space once the deletions are purged (after the server's retention, 30 days by default); this one stays unfinished until there is room")
            return .status(AttachmentStatus(space: spaceID, sha256: sha256, size: size, received: size, complete: true,
                                            contentType: contentType))
        }
        switch decision {
        case .status(let status): return status
        case .refused(let refusal): throw refusal
        }
    }

    // MARK: Reads

    /// What the server has of `sha256` in the space (`Refusal.notUploaded` when nothing).
    func status(of sha256: String, in spaceID: String, for userID: String) async throws -> AttachmentStatus {
        try await database.withConnection { sql in
            try await readAccess(to: spaceID, for: userID, on: sql)
            guard let status = try await status(of: sha256, in: spaceID, on: sql) else { throw Self.notUploaded }
            return status
        }
    }

    /// The bytes of a complete blob (those of `range`), read chunk by chunk as the caller iterates.
    func content(of sha256: String, in spaceID: String, for userID: String,
                 range header: String?) async throws -> (status: AttachmentStatus, range: AttachmentRange, bytes: AttachmentBytes) {
        let database = self.database
        return try await database.withConnection { sql in
            try await readAccess(to: spaceID, for: userID, on: sql)
            guard let status = try await status(of: sha256, in: spaceID, on: sql), status.complete else { throw Self.notUploaded }
            let range = try AttachmentRange.parse(header, size: status.size)
            let (first, last): (Int64, Int64)
            switch range {
            case .whole: (first, last) = (0, status.size - 1)
            case .part(let from, let to): (first, last) = (from, to)
            }
            let offsets = try await sql.select().column("byte_offset").from("attachment_chunks")
                .where("space_id", .equal, spaceID).where("sha256", .equal, sha256)
                .orderBy("byte_offset").all().map { try $0.decode(column: "byte_offset", as: Int64.self) }
            var pieces: [AttachmentBytes.Piece] = []
            for (index, start) in offsets.enumerated() {
                let end = index + 1 < offsets.count ? offsets[index + 1] : status.size  // one past the chunk's last byte
                guard end > first, start <= last else { continue }
                let from = max(first, start), to = min(last + 1, end)
                pieces.append(.init(chunkOffset: start, skip: Int(from - start), take: Int(to - from)))
            }
            return (status, range, AttachmentBytes(database: database, space: spaceID, sha256: sha256, pieces: pieces))
        }
    }

    // MARK: Housekeeping

    /// Deletes the uploads left incomplete and the blobs no record of their space refers to, each
    /// untouched since `now` minus the grace period, and gives the blobs' bytes back to their
    /// space's owner. A record refers to a blob when one of its field values is the blob's
    /// `AttachmentReference`; a deleted record does until its tombstone is purged (an edit stamped
    /// after the delete brings every field back). Answers how many blobs and uploads went.
    @discardableResult
    func collectGarbage(now: Int64) async throws -> Int {
        let cutoff = now - limits.gracePeriod.milliseconds
        var deleted = 0
        let abandoned = try await database.withConnection { sql in
            try await sql.select().columns("space_id", "sha256").from("attachments")
                .where("complete", .equal, 0).where("touched_at", .lessThan, cutoff).limit(Self.garbagePerSweep).all()
        }
        for row in abandoned {
            let spaceID = try row.decode(column: "space_id", as: String.self), sha256 = try row.decode(column: "sha256", as: String.self)
            // NB: the chunks go with the row (ON DELETE CASCADE); an append since the listing touched it and keeps it.
            deleted += try await database.withConnection { sql in
                try await sql.raw("""
                    DELETE FROM attachments WHERE space_id = \(bind: spaceID) AND sha256 = \(bind: sha256)
                      AND complete = 0 AND touched_at < \(bind: cutoff)
                    RETURNING sha256
                    """).all().count
            }
        }
        let unreferenced = try await database.withConnection { sql in
            try await sql.raw("""
                SELECT a.space_id, a.sha256 FROM attachments a
                WHERE a.complete = 1 AND a.touched_at < \(bind: cutoff)
                  AND NOT EXISTS (SELECT 1 FROM sync_records r
                                  WHERE r.space_id = a.space_id AND r.fields LIKE '%"sha256:' || a.sha256 || '"%')
                LIMIT \(unsafeRaw: String(Self.garbagePerSweep))
                """).all()
        }
        for row in unreferenced {
            let spaceID = try row.decode(column: "space_id", as: String.self), sha256 = try row.decode(column: "sha256", as: String.self)
            deleted += try await database.transaction { sql in
                // NB: under the space's counter lock a push cannot commit a reference between the
                // check below and the deletion, nor the space change owner.
                try await SpaceGate.lock([spaceID], on: sql)
                let gone = try await sql.raw("""
                    DELETE FROM attachments WHERE space_id = \(bind: spaceID) AND sha256 = \(bind: sha256)
                      AND complete = 1 AND touched_at < \(bind: cutoff)
                      AND NOT EXISTS (SELECT 1 FROM sync_records r
                                      WHERE r.space_id = \(bind: spaceID) AND r.fields LIKE \(bind: Self.referencePattern(sha256)))
                    RETURNING size
                    """).first()
                guard let gone else { return 0 }
                let size = try gone.decode(column: "size", as: Int64.self)
                try await StorageUsage.add(-size, for: try await owner(of: spaceID, on: sql), quota: .max, on: sql)
                return 1
            }
        }
        return deleted
    }

    /// The most uploads and blobs one sweep looks at of each kind; the next sweep goes on.
    static let garbagePerSweep = 500

    /// What a record's stored fields (compact JSON) hold where a field's value is the reference:
    /// the reference as a JSON string. NB: a field *name* spelled so matches too, which only keeps
    /// a blob longer; a quote inside a text value is escaped (`\"`), so no value merely containing
    /// the reference matches.
    static func referencePattern(_ sha256: String) -> String {
        "%\"\(AttachmentReference.prefix)\(sha256)\"%"
    }

    // MARK: Parts

    static let notUploaded = Refusal.notUploaded("not uploaded yet")

    private static func offsetMismatch(received: Int64) -> Refusal {
        .offsetMismatch("The server has \(received) bytes of this attachment: send them from there", received: received)
    }

    private static func pastTheEnd(size: Int64, count: Int64, offset: Int64) -> Refusal {
        .invalid("The attachment is \(size) bytes: \(count) more from byte \(offset) go past its end")
    }

    private static func notBegun(_ sha256: String) -> Refusal {
        .uploadNotBegun("No upload of this attachment was begun in that space: begin it with PUT /v1/attachments/\(sha256)")
    }

    /// The caller's role in the space, creating their personal space if it is missing (an account
    /// made by an import has none until it writes).
    private func access(to spaceID: String, for userID: String, now: Int64, on sql: any SQLDatabase) async throws -> (name: String, role: SpaceRole) {
        var space = try await SpaceGate.access(of: userID, to: spaceID, on: sql)
        if space == nil, spaceID == userID {
            try await SpaceGate.openPersonalSpace(of: userID, now: now, on: sql)
            space = try await SpaceGate.access(of: userID, to: spaceID, on: sql)
        }
        guard let space, let role = space.currentRole else { throw SpaceGate.notAMember(spaceID) }
        return (space.name, role)
    }

    /// The caller's role, for a read: a personal space not made yet holds nothing.
    private func readAccess(to spaceID: String, for userID: String, on sql: any SQLDatabase) async throws {
        guard try await SpaceGate.role(of: userID, in: spaceID, on: sql) == nil else { return }
        throw spaceID == userID ? Self.notUploaded : SpaceGate.notAMember(spaceID)
    }

    private func requireWriter(_ access: (name: String, role: SpaceRole)) throws {
        guard access.role.writes else {
            throw Refusal.notPermitted("You are a viewer of \(access.name): only its owner and editors attach files")
        }
    }

    /// The upload's status, its `touched_at` moved to `now` (a blob asked for again is kept a grace period more).
    private func touch(_ sha256: String, in spaceID: String, now: Int64, on sql: any SQLDatabase) async throws -> AttachmentStatus? {
        guard let row = try await sql.raw("""
            UPDATE attachments SET touched_at = \(bind: now) WHERE space_id = \(bind: spaceID) AND sha256 = \(bind: sha256)
            RETURNING size, received, complete, content_type
            """).first()
        else { return nil }
        return try Self.status(row, space: spaceID, sha256: sha256)
    }

    private func status(of sha256: String, in spaceID: String, on sql: any SQLDatabase) async throws -> AttachmentStatus? {
        guard let row = try await sql.select().columns("size", "received", "complete", "content_type").from("attachments")
            .where("space_id", .equal, spaceID).where("sha256", .equal, sha256).first()
        else { return nil }
        return try Self.status(row, space: spaceID, sha256: sha256)
    }

    private static func status(_ row: any SQLRow, space: String, sha256: String) throws -> AttachmentStatus {
        AttachmentStatus(space: space, sha256: sha256, size: try row.decode(column: "size", as: Int64.self),
                         received: try row.decode(column: "received", as: Int64.self),
                         complete: try row.decode(column: "complete", as: Int.self) == 1,
                         contentType: try row.decode(column: "content_type", as: String?.self).flatMap(AttachmentContentType.init(rawValue:)))
    }

    /// Refuses a blob of `size` bytes that `userID` begins when it would take the space's owner
    /// past `byteQuota` once complete, or `userID` past their own with the uploads they have under
    /// way: an upload under way counts against whoever began it, so that an editor cannot fill
    /// the owner's quota with uploads that never finish.
    private func requireRoom(for size: Int64, of sha256: String, in spaceID: String, beganBy userID: String, byteQuota: Int64,
                             on sql: any SQLDatabase) async throws {
        let ownerID = try await owner(of: spaceID, on: sql)
        let advice = " Photos of deleted records free their space once the deletions are purged (after the server's retention, 30 days by default)"
        if ownerID != userID {
            let ownerStores = try await storedBytes(of: ownerID, on: sql)
            guard Self.fits(ownerStores, size, within: byteQuota) else {
                throw Refusal.quotaExceeded("Quota reached: the owner of this space stores \(ByteCount.text(ownerStores)),"
                    + " at most \(ByteCount.text(byteQuota)) are allowed, and this attachment is \(ByteCount.text(size))." + advice)
            }
        }
        let stored = try await storedBytes(of: userID, on: sql)
        // NB: an upload begun before `begun_by` existed is its space owner's, as it was then.
        let pending = try await sql.raw("""
            SELECT CAST(COALESCE(SUM(a.size), 0) AS BIGINT) AS bytes FROM attachments a JOIN spaces s ON s.id = a.space_id
            WHERE COALESCE(a.begun_by, s.owner_id) = \(bind: userID) AND a.complete = 0
              AND NOT (a.space_id = \(bind: spaceID) AND a.sha256 = \(bind: sha256))
            """).first()?.decode(column: "bytes", as: Int64.self) ?? 0
        let (withPending, overflow) = stored.addingReportingOverflow(pending)
        guard !overflow, Self.fits(withPending, size, within: byteQuota) else {
            throw Refusal.quotaExceeded("Quota reached: you store \(ByteCount.text(withPending)) with the uploads you have under way,"
                + " at most \(ByteCount.text(byteQuota)) are allowed, and this attachment is \(ByteCount.text(size))." + advice)
        }
    }

    /// Whether `size` more bytes on top of `stored` stay within `quota` (an overflow does not).
    private static func fits(_ stored: Int64, _ size: Int64, within quota: Int64) -> Bool {
        let (total, overflow) = stored.addingReportingOverflow(size)
        return !overflow && total <= quota
    }

    private func storedBytes(of userID: String, on sql: any SQLDatabase) async throws -> Int64 {
        try await sql.select().column("bytes").from("storage_usage").where("user_id", .equal, userID).first()?
            .decode(column: "bytes", as: Int64.self) ?? 0
    }

    private func owner(of spaceID: String, on sql: any SQLDatabase) async throws -> String {
        guard let row = try await sql.select().column("owner_id").from("spaces").where("id", .equal, spaceID).first() else {
            throw StorageError.corrupt("the space \(spaceID) of an attachment has no row")
        }
        return try row.decode(column: "owner_id", as: String.self)
    }

    /// The bytes stored before `offset` (fewer than `AttachmentContentType.bytesNeeded`: only asked
    /// while the content type is unknown).
    private func storedHead(of sha256: String, in spaceID: String, before offset: Int64, on sql: any SQLDatabase) async throws -> [UInt8] {
        guard offset > 0 else { return [] }
        return try await sql.select().column("data").from("attachment_chunks")
            .where("space_id", .equal, spaceID).where("sha256", .equal, sha256).where("byte_offset", .lessThan, offset)
            .orderBy("byte_offset").all()
            .flatMap { Array(try $0.decode(column: "data", as: ByteBuffer.self).readableBytesView) }
    }

    /// The SHA-256 of the stored chunks, read one at a time.
    private func digest(of sha256: String, in spaceID: String, on sql: any SQLDatabase) async throws -> String {
        let offsets = try await sql.select().column("byte_offset").from("attachment_chunks")
            .where("space_id", .equal, spaceID).where("sha256", .equal, sha256)
            .orderBy("byte_offset").all().map { try $0.decode(column: "byte_offset", as: Int64.self) }
        var hasher = SHA256()
        for offset in offsets {
            guard let row = try await sql.select().column("data").from("attachment_chunks")
                .where("space_id", .equal, spaceID).where("sha256", .equal, sha256).where("byte_offset", .equal, offset).first()
            else { throw StorageError.corrupt("a chunk of an attachment vanished inside its transaction") }
            let data = try row.decode(column: "data", as: ByteBuffer.self)
            data.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        }
        return AttachmentReference(digest: hasher.finalize()).sha256
    }

    /// Deletes an upload and its chunks (ON DELETE CASCADE).
    private func delete(_ sha256: String, in spaceID: String, on sql: any SQLDatabase) async throws {
        try await sql.delete(from: "attachments").where("space_id", .equal, spaceID).where("sha256", .equal, sha256).run()
    }
}
