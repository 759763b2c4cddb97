import EventualAPI
import Foundation
import SQLKit

/// A pull's back fill of fields (`field` values, `collection.field`): what a device that upgraded
/// to a version adding those fields lacks, when it did not keep their values while it ran the
/// older version (installed before keeping, or its kept data removed). The page holds only the
/// records of those collections that hold a value other than null and the field's default in one
/// of them, each with only those fields, and no deleted record: the bytes are about the values'
/// own, not the records'.
struct PullFieldFill: Sendable, Equatable {
    struct Field: Sendable, Equatable {
        let collection: String
        let name: String
        /// What a record that never set the field holds already on the device: not sent.
        let defaultValue: SyncValue?
    }

    let fields: [Field]

    static let mostFields = 32

    /// The back fill the `field` values name, against the collections deployed; nil when there are none.
    init?(parsing values: [String]?, collections: [String: SyncCollection]) throws(APIError) {
        guard let values, !values.isEmpty else { return nil }
        guard values.count <= Self.mostFields else {
            throw APIError.badRequest("a pull back fills at most \(Self.mostFields) fields, not \(values.count)")
        }
        var seen = Set<String>()
        fields = try values.map { value throws(APIError) in
            let parts = value.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 2, let collection = collections[String(parts[0])] else {
                throw APIError.badRequest("field must be 'collection.field', naming a deployed collection, not '\(value.prefix(80))'")
            }
            guard let field = collection.fields[String(parts[1])] else {
                throw APIError.badRequest("collection '\(collection.name)' declares no field '\(parts[1].prefix(64))'")
            }
            guard seen.insert(value).inserted else { throw APIError.badRequest("field '\(value)' is named twice") }
            return Field(collection: collection.name, name: String(parts[1]), defaultValue: field.defaultValue)
        }
    }

    /// The collections it reads, in the order first named.
    var collections: [String] {
        var seen = Set<String>()
        return fields.map(\.collection).filter { seen.insert($0).inserted }
    }

    /// The condition a record (`r`) meets to be sent: in one of the collections, not deleted, and
    /// holding a value of one of its fields that is not null and not the field's default.
    func condition(isPostgres: Bool) -> SQLQueryString {
        let terms: [SQLQueryString] = collections.map { collection in
            let held = fields.filter { $0.collection == collection }.map { Self.holdsValue($0, isPostgres: isPostgres) }
            return "(r.collection = \(bind: collection) AND (" + held.joined(separator: " OR ") + "))"
        }
        return "(COALESCE(r.deleted, 0) = 0 AND (" + terms.joined(separator: " OR ") + "))"
    }

    /// True when the record holds the field with a value other than null and its default.
    private static func holdsValue(_ field: Field, isPostgres: Bool) -> SQLQueryString {
        // NB: the field name was found among the collection's declared fields: letters, digits and `_` only.
        let defaultJSON = field.defaultValue.flatMap { value in (try? JSONEncoder().encode(value)).map { String(decoding: $0, as: UTF8.self) } }
        if isPostgres {
            var held: SQLQueryString = "(jsonb_typeof(r.fields::jsonb -> \(bind: field.name)::text) IS NOT NULL AND jsonb_typeof(r.fields::jsonb -> \(bind: field.name)::text) <> 'null'"
            if let defaultJSON { held += " AND (r.fields::jsonb -> \(bind: field.name)::text) <> \(bind: defaultJSON)::jsonb" }
            return held + ")"
        }
        var held: SQLQueryString = "(json_type(r.fields, \(bind: "$." + field.name)) IS NOT NULL AND json_type(r.fields, \(bind: "$." + field.name)) <> 'null'"
        if let defaultJSON { held += " AND json_extract(r.fields, \(bind: "$." + field.name)) IS NOT json_extract(\(bind: defaultJSON), '$')" }
        return held + ")"
    }

    /// `record` with only the fields back filled of its collection.
    func narrowed(_ record: SyncedRecord) -> SyncedRecord {
        let names = Set(fields.filter { $0.collection == record.collection }.map(\.name))
        return SyncedRecord(space: record.space, collection: record.collection, recordID: record.recordID,
                            fields: record.fields.filter { names.contains($0.key) }, isDeleted: record.isDeleted,
                            newestStamp: record.newestStamp, seq: record.seq, changedBy: record.changedBy)
    }
}
