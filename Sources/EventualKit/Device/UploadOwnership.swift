import EventualAPI
import Foundation

/// The records an upload's attachment belongs to, and dropping their references once the
/// person gives the upload up.
extension SignedInDevice {
    /// The records in the upload's space that refer to its attachment, named by the app; nil for
    /// another entry, or when no record refers to it (a scan's photo, a record since edited).
    func owners(ofUpload entry: OutboxEntry) throws -> UploadOwners? {
        guard let upload = AttachmentUpload.payload(of: entry), let reference = AttachmentReference(sha256: upload.sha256) else { return nil }
        let mirrors = store.mirrors.values
        let holders = try store.reader.read { db in try AttachmentHolders.holders(of: reference, space: upload.space, in: mirrors, db) }
        guard let first = holders.first else { return nil }
        let name = try app.recordName(first.collection, first.recordID, store) ?? "record \(first.recordID.suffix(OutboxEntry.shortIDLength))"
        return UploadOwners(holders: holders, name: name)
    }

    /// Clears the fields that refer to a dropped upload's attachment, each a change queued like
    /// a person's edit (the server's copy of the record refers to it too).
    func dropReferences(_ owners: UploadOwners) async throws {
        let mirrors = store.mirrors
        try await store.write { tx in
            for holder in owners.holders {
                guard let mirror = mirrors[holder.collection] else { continue }
                try mirror.update(holder.recordID, setting: [holder.field: .null], in: tx)
            }
        }
    }
}
