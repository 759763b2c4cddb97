import EventualAPI
import Foundation
import GRDB

/// A record that refers to an attachment: the field of the record that holds its reference.
public struct AttachmentHolder: Sendable, Hashable, Codable {
    public let collection: String
    public let recordID: String
    /// The field that holds the reference ("photo", "receipt").
    public let field: String
}

/// The records on this device that refer to an attachment, found through the mirrors of the
/// app's collections: a field holds a reference when its text is exactly one
/// (`AttachmentReference`), whatever the field is named, as the server's housekeeping reads it.
enum AttachmentHolders {
    /// An upload the server refused: the blob, the space it was for (nil: the person's own), and its words.
    struct Refusal {
        let reference: AttachmentReference
        let space: String?
        let reason: String
    }

    /// This device's refused uploads.
    static func refusals(_ db: Database) throws -> [Refusal] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT payload, last_error FROM eventual_outbox WHERE kind = 'call' AND operation = ? AND state = 'failed' ORDER BY position
            """), arguments: [AttachmentUpload.operation]).compactMap { row in
            guard let upload = try? JSONDecoder().decode(AttachmentUpload.Payload.self, from: row["payload"] as Data),
                  let reference = AttachmentReference(sha256: upload.sha256) else { return nil }
            return Refusal(reference: reference, space: upload.space, reason: row["last_error"] ?? "refused by the server")
        }
    }

    /// The records of `mirrors` in `space` (nil: the person's own) that refer to `reference`.
    static func holders(of reference: AttachmentReference, space: String?, in mirrors: some Sequence<TableMirror>,
                        _ db: Database) throws -> [AttachmentHolder] {
        var holders: [AttachmentHolder] = []
        for mirror in mirrors.sorted(by: { $0.collection.name < $1.collection.name }) {
            let fields = referenceFields(of: mirror.collection)
            guard !fields.isEmpty, mirror.collection.scope == .space || space == nil else { continue }
            let inSpace = mirror.collection.scope == .space ? " AND space_id IS ?" : ""
            let sql = "SELECT id, \(fields.map(\.quotedDatabaseIdentifier).joined(separator: ", ")) FROM \(mirror.table.quotedDatabaseIdentifier)"
                + " WHERE (\(fields.map { "\($0.quotedDatabaseIdentifier) = ?" }.joined(separator: " OR ")))\(inSpace) ORDER BY id"
            let arguments = StatementArguments(fields.map { _ in reference.description })
                + (mirror.collection.scope == .space ? StatementArguments([space]) : StatementArguments())
            for row in try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments) {
                for field in fields where (row[field] as String?) == reference.description {
                    holders.append(AttachmentHolder(collection: mirror.collection.name, recordID: row["id"], field: field))
                }
            }
        }
        return holders
    }

    /// Of `ids` (records of `mirror`), those that refer to an attachment whose upload the server
    /// refused, with why: "the upload of its photo was refused: Quota reached".
    static func refused(among ids: some Collection<String>, of mirror: TableMirror, _ db: Database) throws -> [String: String] {
        let refusals = try refusals(db)
        let fields = referenceFields(of: mirror.collection)
        guard !refusals.isEmpty, !fields.isEmpty else { return [:] }
        let references = Array(Set(refusals.map(\.reference.description))).sorted()
        let inSpaces = mirror.collection.scope == .space
        let columns = (["id"] + (inSpaces ? ["space_id"] : []) + fields).map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        let matching = fields.map { "\($0.quotedDatabaseIdentifier) IN (\(OutboxTable.placeholders(references.count)))" }.joined(separator: " OR ")
        var reasons: [String: String] = [:]
        for chunk in Array(Set(ids)).chunked(into: 500) {
            let rows = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT \(columns) FROM \(mirror.table.quotedDatabaseIdentifier)
                WHERE id IN (\(OutboxTable.placeholders(chunk.count))) AND (\(matching))
                """), arguments: StatementArguments(chunk) + StatementArguments(fields.flatMap { _ in references }))
            for row in rows {
                let space: String? = inSpaces ? row["space_id"] : nil
                for field in fields {
                    guard let text = row[field] as String?,
                          let refusal = refusals.last(where: { $0.reference.description == text && $0.space == space }) else { continue }
                    reasons[row["id"]] = "the upload of its \(field) was refused: \(refusal.reason)"
                }
            }
        }
        return reasons
    }

    /// The fields of `collection` whose text may be a reference: strings long enough to hold one.
    static func referenceFields(of collection: SyncCollection) -> [String] {
        let length = AttachmentReference.prefix.count + 64
        return collection.fields.filter { $0.value.type == .string && ($0.value.maxLength ?? length) >= length }.keys.sorted()
    }
}
